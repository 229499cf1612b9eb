//! Reading a unified diff as text (a row's `patch` or `test_patch`): its files, their
//! hunks, and every line with its kind and its numbers in the old file, the new file
//! and the diff itself. No git2 here: rows come from anywhere, and a diff is read
//! the way `git apply` reads it: a hunk ends by its line counts, so content such as
//! `--- x` inside a hunk is never taken for a file header.

/// What a line of a hunk does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    Added,
    Removed,
    Context,
}

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine<'a> {
    pub kind: LineKind,
    /// The line without its leading `+`, `-` or space.
    pub text: &'a str,
    /// Its number in the old file (removed and context lines).
    pub old_line: Option<u32>,
    /// Its number in the new file (added and context lines).
    pub new_line: Option<u32>,
    /// Its number in the diff text, from 1.
    pub diff_line: u32,
}

impl DiffLine<'_> {
    /// The number a reader looks for: in the new file, else in the old one.
    pub fn file_line(&self) -> u32 {
        self.new_line.or(self.old_line).unwrap_or(0)
    }
}

/// One hunk: its header's function context (what follows the second `@@`) and lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffHunk<'a> {
    pub context: &'a str,
    pub lines: Vec<DiffLine<'a>>,
}

/// One file of the diff.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DiffFile<'a> {
    /// `None` for a file the diff creates.
    pub old_path: Option<String>,
    /// `None` for a file the diff deletes.
    pub new_path: Option<String>,
    pub hunks: Vec<DiffHunk<'a>>,
}

impl<'a> DiffFile<'a> {
    /// The path a reader knows the file by: the new one, else the old one.
    pub fn path(&self) -> &str {
        self.new_path.as_deref().or(self.old_path.as_deref()).unwrap_or("")
    }

    /// Every line of every hunk, in order.
    pub fn lines(&self) -> impl Iterator<Item = &DiffLine<'a>> {
        self.hunks.iter().flat_map(|hunk| hunk.lines.iter())
    }

    /// The lines of one kind.
    pub fn lines_of(&self, kind: LineKind) -> impl Iterator<Item = &DiffLine<'a>> {
        self.lines().filter(move |line| line.kind == kind)
    }
}

/// The files of a unified diff, in order.
pub fn parse(diff: &str) -> Vec<DiffFile<'_>> {
    let mut files: Vec<DiffFile<'_>> = Vec::new();
    let (mut old_line, mut new_line) = (0u32, 0u32);
    // Lines still to come in the current hunk, per side.
    let (mut old_left, mut new_left) = (0u32, 0u32);
    for (index, line) in diff.lines().enumerate() {
        let diff_line = index as u32 + 1;
        if old_left == 0 && new_left == 0 {
            if let Some(rest) = line.strip_prefix("diff --git ") {
                // The paths are read from `---` / `+++`; these are for diffs without them
                // (a mode change, a binary file).
                let (old, new) = rest.split_once(" b/").unwrap_or((rest, rest));
                let old = old.strip_prefix("a/").unwrap_or(old).to_string();
                files.push(DiffFile { old_path: Some(old), new_path: Some(new.to_string()), hunks: Vec::new() });
            } else if let Some(path) = line.strip_prefix("--- ") {
                current(&mut files).old_path = side_path(path, "a/");
            } else if let Some(path) = line.strip_prefix("+++ ") {
                current(&mut files).new_path = side_path(path, "b/");
            } else if let Some(header) = line.strip_prefix("@@ ") {
                if let Some(hunk) = HunkHeader::parse(header) {
                    (old_line, new_line, old_left, new_left) =
                        (hunk.old_start, hunk.new_start, hunk.old_count, hunk.new_count);
                    current(&mut files).hunks.push(DiffHunk { context: hunk.context, lines: Vec::new() });
                }
            }
            continue;
        }
        let Some(hunk) = current(&mut files).hunks.last_mut() else { continue };
        let (kind, text) = match line.as_bytes().first() {
            Some(b'+') => (LineKind::Added, &line[1..]),
            Some(b'-') => (LineKind::Removed, &line[1..]),
            Some(b'\\') => continue,
            Some(b' ') => (LineKind::Context, &line[1..]),
            // An empty context line whose space an editor trimmed.
            _ => (LineKind::Context, line),
        };
        let (old, new) = match kind {
            LineKind::Added => (None, Some(new_line)),
            LineKind::Removed => (Some(old_line), None),
            LineKind::Context => (Some(old_line), Some(new_line)),
        };
        if old.is_some() {
            old_line += 1;
            old_left = old_left.saturating_sub(1);
        }
        if new.is_some() {
            new_line += 1;
            new_left = new_left.saturating_sub(1);
        }
        hunk.lines.push(DiffLine { kind, text, old_line: old, new_line: new, diff_line });
    }
    files
}

/// The file being read; a diff that starts without `diff --git` gets one.
fn current<'a, 'b>(files: &'b mut Vec<DiffFile<'a>>) -> &'b mut DiffFile<'a> {
    if files.is_empty() {
        files.push(DiffFile::default());
    }
    files.last_mut().expect("just ensured")
}

/// `a/path` (or `b/path`) to `path`; `/dev/null` to `None`.
fn side_path(text: &str, prefix: &str) -> Option<String> {
    let text = text.split('\t').next().unwrap_or(text).trim_end();
    if text == "/dev/null" {
        return None;
    }
    let text = text.trim_matches('"');
    Some(text.strip_prefix(prefix).unwrap_or(text).to_string())
}

/// A hunk header `-s[,c] +s[,c] @@ CONTEXT`: a missing count is 1; an empty side
/// (start 0) starts counting at 1.
struct HunkHeader<'a> {
    old_start: u32,
    old_count: u32,
    new_start: u32,
    new_count: u32,
    context: &'a str,
}

impl<'a> HunkHeader<'a> {
    fn parse(header: &'a str) -> Option<HunkHeader<'a>> {
        let mut words = header.splitn(3, ' ');
        let range = |text: &str| -> Option<(u32, u32)> {
            let mut parts = text.split(',');
            let start = parts.next()?.parse::<u32>().ok()?;
            let count = match parts.next() {
                Some(count) => count.parse::<u32>().ok()?,
                None => 1,
            };
            Some((start.max(1), count))
        };
        let (old_start, old_count) = range(words.next()?.strip_prefix('-')?)?;
        let (new_start, new_count) = range(words.next()?.strip_prefix('+')?)?;
        let context = words.next().and_then(|rest| rest.strip_prefix("@@")).unwrap_or("").trim();
        Some(HunkHeader { old_start, old_count, new_start, new_count, context })
    }
}

/// Diffs for the tests of the modules that read them.
#[cfg(test)]
pub mod fixtures {
    /// The diff of `path` changed by `hunks` (from their first `@@` line on): git's
    /// header of a modified file, which tests of what reads the hunks need not spell out.
    pub fn modified(path: &str, hunks: &str) -> String {
        format!("diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n{hunks}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_carry_their_numbers_in_both_files_and_in_the_diff() {
        let diff = "\
diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -1,3 +1,3 @@ def add(a, b):
 def add(a, b):
-    return a - b
+    return a + b

diff --git a/new.py b/new.py
new file mode 100644
--- /dev/null
+++ b/new.py
@@ -0,0 +1 @@
+x = 1
";
        let files = parse(diff);
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].path(), "calc.py");
        assert_eq!(files[0].hunks[0].context, "def add(a, b):");
        let lines: Vec<_> =
            files[0].lines().map(|line| (line.kind, line.old_line, line.new_line, line.diff_line)).collect();
        assert_eq!(
            lines,
            [
                (LineKind::Context, Some(1), Some(1), 5),
                (LineKind::Removed, Some(2), None, 6),
                (LineKind::Added, None, Some(2), 7),
                (LineKind::Context, Some(3), Some(3), 8),
            ]
        );
        assert_eq!(files[1].old_path, None);
        assert_eq!(files[1].path(), "new.py");
        assert_eq!(files[1].lines_of(LineKind::Added).next().unwrap().text, "x = 1");
    }

    #[test]
    fn header_like_content_inside_a_hunk_is_content() {
        let diff = "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -3 +3 @@\n--- a/comment\n+++ b/comment\n";
        let files = parse(diff);
        assert_eq!(files.len(), 1);
        let lines: Vec<_> = files[0].lines().map(|line| (line.kind, line.text)).collect();
        assert_eq!(lines, [(LineKind::Removed, "-- a/comment"), (LineKind::Added, "++ b/comment")]);
    }
}
