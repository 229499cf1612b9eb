//! Signals of the issue itself: too thin to act on, in need of something outside the
//! repository, several issues in one, not in English, or holding the solution.

use std::sync::LazyLock;

use regex::Regex;

use super::Reading;
use crate::git::patch_text::LineKind;
use crate::screen::code::{self, collapse};
use crate::screen::flags::{Evidence, Flag, FlagCode, Source, one_line, quoted_list};
use crate::screen::text::{TextLine, regex};

/// The issue states no expected behaviour, shows no reproduction and names no error.
/// Returns the flag, if raised.
pub fn too_thin(reading: &Reading<'_>) -> Option<Flag> {
    let issue = &reading.issue;
    if issue.expectation_line().is_some() || issue.has_code() || issue.error_line().is_some() {
        return None;
    }
    let title = issue.lines.iter().find(|line| !line.text.trim().is_empty())?;
    Some(Flag {
        code: FlagCode::IssueTooThin,
        reason: format!(
            "the issue ({} words, \"{}\") states no expected behaviour, shows no reproduction and names no error",
            issue.prose_words(),
            one_line(title.text, 60)
        ),
        evidence: vec![Evidence::in_text(title.text.trim(), Source::Issue, title.number)],
        precision: None,
    })
}

static IMAGE: LazyLock<Regex> = LazyLock::new(|| regex(r"(?i)(!\[[^\]]*\]\([^)]*\)|<img\b[^>]*>|\bscreen ?shots?\b)"));
static IMAGE_URL: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)(\.(png|jpe?g|gif|svg|bmp|webp)([?#].*)?$|user-images\.githubusercontent\.com|/assets/)")
});
static VIDEO_URL: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)(\.(mp4|mov|webm|avi|mkv)([?#].*)?$|youtube\.com|youtu\.be|vimeo\.com|loom\.com)"));

/// Links, images and videos whose content the issue relies on. A link to the
/// repository's own code (`github.com/OWNER/NAME/blob|tree|commit/...`) is inside it.
/// Returns the flag and how many there are.
pub fn external_resources(reading: &Reading<'_>) -> (Option<Flag>, usize) {
    let own_code = format!("github.com/{}/", reading.task.repo.to_lowercase());
    let mut items: Vec<String> = Vec::new();
    let mut evidence = Vec::new();
    let mut kinds = [0usize; 3];
    let mut push = |text: &str, line: &TextLine<'_>, kind: usize, items: &mut Vec<String>| {
        if items.iter().any(|item| item == text) {
            return;
        }
        items.push(text.to_string());
        kinds[kind] += 1;
        evidence.push(Evidence::in_text(text, Source::Issue, line.number));
    };
    for line in &reading.issue.lines {
        for found in IMAGE.find_iter(line.text) {
            push(found.as_str(), line, 1, &mut items);
        }
    }
    for (line, url) in reading.issue.urls() {
        let lower = url.to_lowercase();
        let inside = lower.contains(&own_code)
            && ["blob/", "tree/", "commit/"].iter().any(|part| lower.contains(&format!("{own_code}{part}")));
        if inside || items.iter().any(|item| item.contains(url)) {
            continue;
        }
        let kind = if VIDEO_URL.is_match(url) {
            2
        } else if IMAGE_URL.is_match(url) {
            1
        } else {
            0
        };
        push(url, line, kind, &mut items);
    }
    if items.is_empty() {
        return (None, 0);
    }
    let mut parts = Vec::new();
    for (count, what) in kinds.iter().zip(["link", "image", "video"]) {
        match count {
            0 => {}
            1 if what == "image" => parts.push("an image".to_string()),
            1 => parts.push(format!("a {what}")),
            n => parts.push(format!("{n} {what}s")),
        }
    }
    let reason =
        format!("the issue relies on {} outside the repository: {}", parts.join(" and "), quoted_list(&items, 2));
    (Some(Flag { code: FlagCode::NeedsExternalResource, reason, evidence, precision: None }), items.len())
}

/// A list item that asks for a change.
static REQUEST_ITEM: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)^\s*(\d+[.)]|[-*•])\s+.*\b(should|add|allow|support|make|fix|change|remove|rename|deprecate|implement|expose|return|raise|accept|update)\b",
    )
});
/// A sentence that opens another issue.
static ANOTHER_ISSUE: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)\b(another|a second|a separate|secondly|a related|one more) (issue|problem|bug|thing|request)\b")
});

/// The pull request resolves several issues, or the issue asks for several changes (a
/// list of at least three requests, or a sentence that opens another issue).
pub fn several_issues(reading: &Reading<'_>) -> Option<Flag> {
    let numbers = reading.task.issue_numbers;
    if numbers.len() > 1 {
        let list: Vec<String> = numbers.iter().map(|number| format!("#{number}")).collect();
        let title = reading.issue.lines.first()?;
        return Some(Flag {
            code: FlagCode::SeveralIssues,
            reason: format!("the pull request resolves {} issues: {}", numbers.len(), list.join(", ")),
            evidence: vec![Evidence::in_text(title.text.trim(), Source::Issue, title.number)],
            precision: None,
        });
    }
    let requests: Vec<&TextLine<'_>> = reading.issue.prose().filter(|line| REQUEST_ITEM.is_match(line.text)).collect();
    let openers: Vec<(&TextLine<'_>, &str)> = reading
        .issue
        .prose()
        .filter_map(|line| ANOTHER_ISSUE.find(line.text).map(|found| (line, found.as_str())))
        .collect();
    if requests.len() >= 3 {
        let items: Vec<String> = requests.iter().map(|line| line.text.trim().to_string()).collect();
        return Some(Flag {
            code: FlagCode::SeveralIssues,
            reason: format!("the issue asks for {} changes: {}", requests.len(), quoted_list(&items, 2)),
            evidence: requests
                .iter()
                .map(|line| Evidence::in_text(line.text.trim(), Source::Issue, line.number))
                .collect(),
            precision: None,
        });
    }
    let (line, opener) = openers.first()?;
    Some(Flag {
        code: FlagCode::SeveralIssues,
        reason: format!("the issue raises more than one problem: \"{}\"", one_line(line.text, 80)),
        evidence: vec![Evidence::in_text(opener, Source::Issue, line.number)],
        precision: None,
    })
}

/// The issue's prose is not English, by `whatlang` on its prose with URLs and inline
/// code removed (at least ten words), or because most of its letters are not Latin.
pub fn not_english(reading: &Reading<'_>) -> Option<Flag> {
    static NOISE: LazyLock<Regex> = LazyLock::new(|| regex(r"https?://\S+|`[^`]*`"));
    let prose: String =
        reading.issue.prose().map(|line| NOISE.replace_all(line.text, " ").into_owned()).collect::<Vec<_>>().join("\n");
    let words = prose.split_whitespace().count();
    let letters: Vec<char> = prose.chars().filter(|c| c.is_alphabetic()).collect();
    let non_latin = letters.iter().filter(|c| !c.is_ascii() && !is_latin_accent(**c)).count();
    let mostly_non_latin = letters.len() >= 20 && non_latin * 2 > letters.len();
    let detected = whatlang::detect(&prose);
    let other_language =
        detected.as_ref().filter(|info| words >= 10 && info.lang() != whatlang::Lang::Eng && info.is_reliable());
    if !mostly_non_latin && other_language.is_none() {
        return None;
    }
    let language = detected.map(|info| info.lang().eng_name()).unwrap_or("not English");
    let line = reading.issue.prose().find(|line| line.text.chars().any(char::is_alphabetic))?;
    Some(Flag {
        code: FlagCode::NotEnglish,
        reason: format!("the issue reads as {language}: \"{}\"", one_line(line.text, 60)),
        evidence: vec![Evidence::in_text(line.text.trim(), Source::Issue, line.number)],
        precision: None,
    })
}

fn is_latin_accent(c: char) -> bool {
    ('\u{00C0}'..='\u{024F}').contains(&c)
}

/// The issue holds the solution: at least half of the gold patch's substantial added
/// lines (or at least one, when the issue holds a diff) appear in it. Returns the flag
/// and the share of those lines that the issue holds.
pub fn solution_in_issue(reading: &Reading<'_>) -> (Option<Flag>, f64) {
    let issue_lines: Vec<(u32, String)> = reading
        .issue
        .lines
        .iter()
        .map(|line| {
            (line.number, collapse(code::strip_comment(line.text.trim_start_matches(['+', '-', '>', ' ', '\t']))))
        })
        .collect();
    let has_diff = reading.issue.lines.iter().any(|line| {
        line.text.starts_with("diff --git") || line.text.starts_with("@@ ") || line.text.starts_with("+++ ")
    });
    let mut substantial = 0;
    let mut evidence = Vec::new();
    let mut matched = Vec::new();
    for file in &reading.patch {
        for line in file.lines_of(LineKind::Added) {
            let flat = collapse(code::strip_comment(line.text));
            if flat.chars().count() < 12 || code::lex(line.text).code.trim().is_empty() {
                continue;
            }
            substantial += 1;
            if let Some((number, _)) = issue_lines.iter().find(|(_, issue_line)| *issue_line == flat) {
                matched.push(flat.clone());
                evidence.push(Evidence::in_text(line.text.trim(), Source::Issue, *number));
                evidence.push(Evidence::in_diff(line.text.trim(), Source::Patch, file.path(), line));
            }
        }
    }
    let share = if substantial == 0 { 0.0 } else { matched.len() as f64 / substantial as f64 };
    if matched.is_empty() || (share < 0.5 && !has_diff) {
        return (None, share);
    }
    let reason = format!(
        "the issue holds {} of the gold patch's {substantial} added lines{}, e.g. {}",
        matched.len(),
        if has_diff { " in a diff" } else { "" },
        quoted_list(&matched, 1)
    );
    (Some(Flag { code: FlagCode::SolutionInIssue, reason, evidence, precision: None }), share)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::screen::signals::TaskText;

    use super::super::CALC_FIX as PATCH;

    fn reading<'a>(issue: &'a str, issue_numbers: &'a [u64]) -> Reading<'a> {
        Reading::new(TaskText { issue_numbers, ..TaskText::of_texts("acme/calc", issue, PATCH, "", &[]) }, vec![])
    }

    #[test]
    fn a_thin_issue_is_raised_and_one_with_an_expectation_an_error_or_code_is_not() {
        let flag = too_thin(&reading("Improve add\nThe add function could be better.\n", &[])).expect("raised");
        assert_eq!(flag.evidence[0].text, "Improve add");
        assert!(flag.reason.contains("(8 words"), "{}", flag.reason);
        for enough in [
            "add is off\nadd(1, 2) should return 3.",
            "add is off\nIt raises TypeError on floats.",
            "add is off\n```\nadd(1, 2)\n```",
            // A call and its wrong result in plain prose is a reproduction (the demo's Go task).
            "Clamp(15, 0, 10) returns 15\nValues above the range come back unchanged.",
        ] {
            assert!(too_thin(&reading(enough, &[])).is_none(), "{enough}");
        }
        // A call with nothing said of its result is not.
        assert!(too_thin(&reading("Rework Clamp()\nClamp(v) could be nicer.\n", &[])).is_some());
    }

    #[test]
    fn external_links_images_and_videos_are_raised_and_links_to_the_repositorys_code_are_not() {
        let issue = "Broken plot\nSee ![plot](https://user-images.githubusercontent.com/1/a.png) and \
                     https://example.org/spec and https://www.youtube.com/watch?v=x\n";
        let (flag, count) = external_resources(&reading(issue, &[]));
        let flag = flag.expect("raised");
        assert_eq!(count, 3);
        assert!(flag.reason.contains("a link and an image and a video"), "{}", flag.reason);
        assert_eq!(flag.evidence[1].text, "https://example.org/spec");
        let own = "Broken\nThe code at https://github.com/acme/calc/blob/main/calc.py#L2 subtracts.";
        assert_eq!(external_resources(&reading(own, &[])), (None, 0));
    }

    #[test]
    fn several_issues_are_raised_for_several_issue_numbers_request_lists_and_openers() {
        let flag = several_issues(&reading("Two bugs\nbody", &[3, 5])).expect("raised");
        assert!(flag.reason.contains("#3, #5"), "{}", flag.reason);
        let list = "Wishes\n1. add should accept floats\n2. sub should accept floats\n3. rename mul to times\n";
        assert!(several_issues(&reading(list, &[])).expect("raised").reason.contains("3 changes"));
        let opener = "add is wrong\nIt subtracts. Another issue: sub is slow.";
        assert_eq!(several_issues(&reading(opener, &[])).expect("raised").evidence[0].text, "Another issue");
        assert!(several_issues(&reading("add is wrong\nIt subtracts; it should add.", &[7])).is_none());
    }

    #[test]
    fn an_issue_in_another_language_is_raised_and_an_english_one_is_not() {
        let german = "Falsches Ergebnis\nDie Funktion add gibt bei zwei positiven Zahlen immer die Differenz zurück, \
                      obwohl die Summe erwartet wird. Das ist seit der letzten Version so.";
        let flag = not_english(&reading(german, &[])).expect("raised");
        assert!(flag.reason.contains("German"), "{}", flag.reason);
        let chinese =
            "加法错误\n函数 add 返回两个数的差而不是和，这在最新版本中出现，请修复这个问题，谢谢大家的帮助和支持。";
        assert!(not_english(&reading(chinese, &[])).is_some());
        let english = "Wrong result\nThe function add returns the difference of two positive numbers although \
                       the sum is expected. This has been so since the last release.";
        assert!(not_english(&reading(english, &[])).is_none());
    }

    #[test]
    fn the_solution_in_the_issue_is_raised_and_a_bare_description_is_not() {
        let issue = "add subtracts\nChange it to\n```\n    return a + b\n```\n";
        let (flag, share) = solution_in_issue(&reading(issue, &[]));
        let flag = flag.expect("raised");
        assert_eq!(share, 1.0);
        assert_eq!((flag.evidence[0].source, flag.evidence[0].line), (Source::Issue, Some(4)));
        assert_eq!((flag.evidence[1].source, flag.evidence[1].line), (Source::Patch, Some(2)));
        let (flag, share) = solution_in_issue(&reading("add subtracts\nIt should add.", &[]));
        assert!(flag.is_none());
        assert_eq!(share, 0.0);
    }
}
