//! Signals of the gold patch's shape: its size, the source files it touches, and hunks
//! that change nothing but formatting or a name (changes that ride along with a fix).

use super::Reading;
use crate::git::patch_text::{DiffHunk, LineKind};
use crate::screen::flags::{Evidence, Flag, FlagCode, Source, quoted_list};

/// How big the gold patch is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PatchSize {
    /// Added plus removed lines, in every file.
    pub changed_lines: usize,
    /// Files that are not documentation or release notes.
    pub source_files: usize,
    pub hunks: usize,
}

/// Whether a path is documentation or release notes rather than code.
pub fn is_documentation(path: &str) -> bool {
    let lower = path.to_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    [".md", ".rst", ".txt", ".adoc"].iter().any(|extension| name.ends_with(extension))
        || ["changes", "changelog", "news", "history", "authors"].iter().any(|prefix| name.starts_with(prefix))
        || lower.split('/').any(|part| matches!(part, "docs" | "doc" | "changelog" | "changes" | "release-notes"))
}

pub fn size(reading: &Reading<'_>) -> PatchSize {
    let mut size = PatchSize::default();
    for file in &reading.patch {
        size.changed_lines += file.lines().filter(|line| line.kind != LineKind::Context).count();
        size.hunks += file.hunks.len();
        if !is_documentation(file.path()) {
            size.source_files += 1;
        }
    }
    size
}

/// What a hunk changes besides the fix, if that is all it changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RideAlong {
    /// Only whitespace and line breaks differ.
    Formatting,
    /// Every changed line differs by one name replaced with another.
    Rename { old: String, new: String },
}

/// Whether a line reads as prose (four words in a row): a docstring's or a comment's
/// wording, where a changed word is an edit of text, not a rename.
fn is_prose(line: &str) -> bool {
    line.split_whitespace()
        .collect::<Vec<_>>()
        .windows(4)
        .any(|words| words.iter().all(|word| word.chars().all(|c| c.is_alphabetic() || ",.;:".contains(c))))
}

/// Whether a hunk only reformats or only renames.
pub fn ride_along(hunk: &DiffHunk<'_>) -> Option<RideAlong> {
    let removed: Vec<&str> =
        hunk.lines.iter().filter(|line| line.kind == LineKind::Removed).map(|line| line.text).collect();
    let added: Vec<&str> =
        hunk.lines.iter().filter(|line| line.kind == LineKind::Added).map(|line| line.text).collect();
    if removed.is_empty() || added.is_empty() {
        return None;
    }
    let squeeze = |lines: &[&str]| -> String { lines.concat().chars().filter(|c| !c.is_whitespace()).collect() };
    if squeeze(&removed) == squeeze(&added) {
        return Some(RideAlong::Formatting);
    }
    if removed.len() != added.len() || removed.iter().chain(&added).any(|line| is_prose(line)) {
        return None;
    }
    let mut renamed: Option<(String, String)> = None;
    for (old, new) in removed.iter().zip(&added) {
        let (old, new) = (tokens(old), tokens(new));
        if old.len() != new.len() {
            return None;
        }
        for (a, b) in old.iter().zip(&new) {
            if a == b {
                continue;
            }
            let is_name = |token: &str| token.starts_with(|c: char| c.is_alphabetic() || c == '_');
            if !is_name(a) || !is_name(b) {
                return None;
            }
            match &renamed {
                None => renamed = Some((a.to_string(), b.to_string())),
                Some((was, now)) if was == a && now == b => {}
                Some(_) => return None,
            }
        }
    }
    renamed.map(|(old, new)| RideAlong::Rename { old, new })
}

/// Identifiers and single other characters, whitespace dropped.
fn tokens(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    for (index, c) in line.char_indices() {
        let word = c.is_alphanumeric() || c == '_';
        match (word, start) {
            (true, None) => start = Some(index),
            (true, Some(_)) => {}
            (false, Some(begin)) => {
                out.push(&line[begin..index]);
                start = None;
            }
            (false, None) => {}
        }
        if !word && !c.is_whitespace() {
            out.push(&line[index..index + c.len_utf8()]);
        }
    }
    if let Some(begin) = start {
        out.push(&line[begin..]);
    }
    out
}

/// The gold patch touches at least `many_files` source files, or has hunks that only
/// reformat, or that make one rename in several hunks, beside the ones that fix (a
/// rename in one hunk is usually the fix itself: a helper takes the old name's place).
/// Returns the flag and the count of such hunks.
pub fn sprawling(reading: &Reading<'_>, many_files: usize) -> (Option<Flag>, usize) {
    let size = size(reading);
    let found: Vec<(&str, &DiffHunk<'_>, RideAlong)> = reading
        .patch
        .iter()
        .flat_map(|file| {
            file.hunks.iter().filter_map(move |hunk| ride_along(hunk).map(|kind| (file.path(), hunk, kind)))
        })
        .collect();
    let repeated = |kind: &RideAlong| {
        matches!(kind, RideAlong::Formatting) || found.iter().filter(|(_, _, other)| other == kind).count() >= 2
    };
    let mut ride_alongs = Vec::new();
    let mut evidence = Vec::new();
    for (path, hunk, kind) in &found {
        if !repeated(kind) {
            continue;
        }
        let description = match kind {
            RideAlong::Formatting => format!("formatting in {path}"),
            RideAlong::Rename { old, new } => format!("{old} renamed to {new} in {path}"),
        };
        if let Some(line) = hunk.lines.iter().find(|line| line.kind == LineKind::Added) {
            evidence.push(Evidence::in_diff(line.text.trim(), Source::Patch, path, line));
        }
        ride_alongs.push(description);
    }
    let mixed = !ride_alongs.is_empty() && ride_alongs.len() < size.hunks;
    if size.source_files < many_files && !mixed {
        return (None, ride_alongs.len());
    }
    let files: Vec<String> =
        reading.patch.iter().map(|file| file.path().to_string()).filter(|path| !is_documentation(path)).collect();
    let reason = if size.source_files >= many_files {
        format!("the gold patch touches {} source files: {}", size.source_files, quoted_list(&files, 3))
    } else {
        format!("the gold patch mixes unrelated changes into the fix: {}", quoted_list(&ride_alongs, 2))
    };
    if size.source_files >= many_files && evidence.is_empty() {
        for file in &reading.patch {
            if let Some(line) = file.lines().find(|line| line.kind != LineKind::Context) {
                evidence.push(Evidence::in_diff(line.text.trim(), Source::Patch, file.path(), line));
            }
        }
    }
    (Some(Flag { code: FlagCode::SprawlingPatch, reason, evidence, precision: None }), ride_alongs.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::screen::signals::TaskText;

    fn reading(patch: &str) -> Reading<'_> {
        Reading::new(TaskText::of_texts("acme/calc", "", patch, "", &[]), vec![])
    }

    use super::super::CALC_FIX as FIX;

    #[test]
    fn hunks_that_only_reformat_or_rename_are_told_apart_from_fixes() {
        let files = crate::git::patch_text::parse(FIX);
        assert_eq!(ride_along(&files[0].hunks[0]), None);
        let format =
            "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,1 @@\n-x = f(a,\n-      b)\n+x = f(a, b)\n";
        assert_eq!(ride_along(&crate::git::patch_text::parse(format)[0].hunks[0]), Some(RideAlong::Formatting));
        let rename = "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n-total = count(x)\n-print(total)\n+amount = count(x)\n+print(amount)\n";
        assert_eq!(
            ride_along(&crate::git::patch_text::parse(rename)[0].hunks[0]),
            Some(RideAlong::Rename { old: "total".into(), new: "amount".into() })
        );
    }

    #[test]
    fn a_sprawling_patch_is_raised_for_many_files_or_mixed_changes_and_a_plain_fix_is_not() {
        assert_eq!(sprawling(&reading(FIX), 3), (None, 0));
        let mixed = format!(
            "{FIX}diff --git a/util.py b/util.py\n--- a/util.py\n+++ b/util.py\n@@ -4,2 +4,1 @@\n-y = g(a,\n-      b)\n+y = g(a, b)\n"
        );
        let (flag, count) = sprawling(&reading(&mixed), 3);
        let flag = flag.expect("raised");
        assert_eq!(count, 1);
        assert!(flag.reason.contains("`formatting in util.py`"), "{}", flag.reason);
        assert_eq!((flag.evidence[0].file.as_deref(), flag.evidence[0].line), (Some("util.py"), Some(4)));
        let (flag, _) = sprawling(&reading(&mixed), 2);
        assert!(flag.expect("raised").reason.contains("touches 2 source files"));
        // One rename in one hunk is the fix's own; the same rename in two hunks rides along.
        let rename = |start: u32| {
            format!(
                "diff --git a/r{start}.py b/r{start}.py\n--- a/r{start}.py\n+++ b/r{start}.py\n@@ -{start} +{start} @@\n-    return self.transform(x)\n+    return self._transform(x)\n"
            )
        };
        assert_eq!(sprawling(&reading(&format!("{FIX}{}", rename(3))), 9), (None, 0));
        let (flag, count) = sprawling(&reading(&format!("{FIX}{}{}", rename(3), rename(8))), 9);
        assert_eq!(count, 2);
        assert!(flag.expect("raised").reason.contains("`transform renamed to _transform in r3.py`"));
        let docstring = "diff --git a/d.py b/d.py\n--- a/d.py\n+++ b/d.py\n@@ -1 +1 @@\n-    The method fit the model\n+    The method fits the model\n";
        assert_eq!(ride_along(&crate::git::patch_text::parse(docstring)[0].hunks[0]), None, "an edit of prose");
        let notes = format!(
            "{FIX}diff --git a/docs/changes.rst b/docs/changes.rst\n--- a/docs/changes.rst\n+++ b/docs/changes.rst\n@@ -1 +1,2 @@\n x\n+fixed add\n"
        );
        assert_eq!(size(&reading(&notes)).source_files, 1, "release notes are not source files");
    }
}
