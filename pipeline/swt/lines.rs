//! The lines a unified diff changes: per file, the lines it removes (numbered as in
//! the old file, on R) and the lines it adds (numbered as in the new file, on R∘X).
//! Only `.py` files are kept: those are the files the line counter can trace.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// Line numbers per repository-relative path.
pub type FileLines = BTreeMap<String, BTreeSet<u32>>;

/// What a patch removes and adds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangedLines {
    pub removed: FileLines,
    pub added: FileLines,
}

impl ChangedLines {
    /// The Python lines that `diff` removes and adds.
    pub fn of_patch(diff: &str) -> ChangedLines {
        let mut changed = ChangedLines::default();
        let (mut old_path, mut new_path): (Option<String>, Option<String>) = (None, None);
        let (mut old_line, mut new_line) = (0u32, 0u32);
        // Lines still to come in the current hunk, per side: a hunk ends by its counts,
        // so content such as `--- x` inside it is never taken for a file header.
        let (mut old_left, mut new_left) = (0u32, 0u32);
        for line in diff.lines() {
            if old_left == 0 && new_left == 0 {
                if line.starts_with("diff --git ") {
                    (old_path, new_path) = (None, None);
                } else if let Some(path) = line.strip_prefix("--- ") {
                    old_path = side_path(path, "a/");
                } else if let Some(path) = line.strip_prefix("+++ ") {
                    new_path = side_path(path, "b/");
                } else if let Some(header) = line.strip_prefix("@@ ") {
                    if let Some(hunk) = Hunk::parse(header) {
                        (old_line, new_line, old_left, new_left) =
                            (hunk.old_start, hunk.new_start, hunk.old_count, hunk.new_count);
                    }
                }
                continue;
            }
            match line.as_bytes().first() {
                Some(b'-') => {
                    if let Some(path) = old_path.as_ref().filter(|path| path.ends_with(".py")) {
                        changed.removed.entry(path.clone()).or_default().insert(old_line);
                    }
                    old_line += 1;
                    old_left = old_left.saturating_sub(1);
                }
                Some(b'+') => {
                    if let Some(path) = new_path.as_ref().filter(|path| path.ends_with(".py")) {
                        changed.added.entry(path.clone()).or_default().insert(new_line);
                    }
                    new_line += 1;
                    new_left = new_left.saturating_sub(1);
                }
                Some(b'\\') => {}
                // Context (a space, or an empty line where an editor trimmed the space).
                _ => {
                    old_line += 1;
                    new_line += 1;
                    old_left = old_left.saturating_sub(1);
                    new_left = new_left.saturating_sub(1);
                }
            }
        }
        changed
    }

    /// The files whose lines are counted on R (removed) and on R∘X (added).
    pub fn files(&self) -> BTreeSet<String> {
        self.removed.keys().chain(self.added.keys()).cloned().collect()
    }
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

/// A hunk header `-s[,c] +s[,c] @@ ...`: a missing count is 1; an empty side
/// (start 0) starts counting at 1.
struct Hunk {
    old_start: u32,
    old_count: u32,
    new_start: u32,
    new_count: u32,
}

impl Hunk {
    fn parse(header: &str) -> Option<Hunk> {
        let mut words = header.split(' ');
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
        Some(Hunk { old_start, old_count, new_start, new_count })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(lines: &[u32]) -> BTreeSet<u32> {
        lines.iter().copied().collect()
    }

    #[test]
    fn removed_lines_are_numbered_on_the_old_file_and_added_on_the_new() {
        let diff = "\
diff --git a/calc/__init__.py b/calc/__init__.py
--- a/calc/__init__.py
+++ b/calc/__init__.py
@@ -1,8 +1,7 @@ 
 def add(a, b):
-    if b < 0:
-        return a - b
+    x = a
     return a + b
 
 
 def sub(a, b):
-    return a - b
+    return -(b - a)
diff --git a/calc/new.py b/calc/new.py
new file mode 100644
--- /dev/null
+++ b/calc/new.py
@@ -0,0 +1,2 @@
+def unused():
+    return 1
diff --git a/README.md b/README.md
--- a/README.md
+++ b/README.md
@@ -1 +1 @@
-old
+new
";
        let changed = ChangedLines::of_patch(diff);
        assert_eq!(changed.removed.len(), 1, "README.md is not Python: {changed:?}");
        assert_eq!(changed.removed["calc/__init__.py"], set(&[2, 3, 8]));
        assert_eq!(changed.added["calc/__init__.py"], set(&[2, 7]));
        assert_eq!(changed.added["calc/new.py"], set(&[1, 2]));
        assert_eq!(changed.files().len(), 2);
    }

    #[test]
    fn lines_that_look_like_headers_inside_a_hunk_are_content() {
        let diff = "\
diff --git a/m.py b/m.py
--- a/m.py
+++ b/m.py
@@ -3 +3 @@ def f():
--- a/comment
+++ b/comment
\\ No newline at end of file
";
        let changed = ChangedLines::of_patch(diff);
        assert_eq!(changed.removed["m.py"], set(&[3]));
        assert_eq!(changed.added["m.py"], set(&[3]));
    }

    #[test]
    fn deleted_files_have_only_removed_lines() {
        let diff = "\
diff --git a/gone.py b/gone.py
deleted file mode 100644
--- a/gone.py
+++ /dev/null
@@ -1,2 +0,0 @@
-a = 1
-b = 2
";
        let changed = ChangedLines::of_patch(diff);
        assert_eq!(changed.removed["gone.py"], set(&[1, 2]));
        assert!(changed.added.is_empty());
    }
}
