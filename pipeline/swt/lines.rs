//! The lines a unified diff changes: per file, the lines it removes (numbered as in
//! the old file, on R) and the lines it adds (numbered as in the new file, on R∘X).
//! Only `.py` files are kept: those are the files the line counter can trace.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::git::patch_text::LineKind;

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
        for file in crate::git::patch_text::parse(diff) {
            for line in file.lines() {
                let (lines, path, number) = match line.kind {
                    LineKind::Removed => (&mut changed.removed, &file.old_path, line.old_line),
                    LineKind::Added => (&mut changed.added, &file.new_path, line.new_line),
                    LineKind::Context => continue,
                };
                if let (Some(path), Some(number)) = (path.as_ref().filter(|path| path.ends_with(".py")), number) {
                    lines.entry(path.clone()).or_default().insert(number);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::patch_text::fixtures::modified;

    fn set(lines: &[u32]) -> BTreeSet<u32> {
        lines.iter().copied().collect()
    }

    #[test]
    fn removed_lines_are_numbered_on_the_old_file_and_added_on_the_new() {
        let changed_module = "\
@@ -1,8 +1,7 @@ 
 def add(a, b):
-    if b < 0:
-        return a - b
+    x = a
     return a + b
 
 
 def sub(a, b):
-    return a - b
+    return -(b - a)
";
        let new_module = "\
diff --git a/calc/new.py b/calc/new.py
new file mode 100644
--- /dev/null
+++ b/calc/new.py
@@ -0,0 +1,2 @@
+def unused():
+    return 1
";
        let diff = modified("calc/__init__.py", changed_module)
            + new_module
            + &modified("README.md", "@@ -1 +1 @@\n-old\n+new\n");
        let changed = ChangedLines::of_patch(&diff);
        assert_eq!(changed.removed.len(), 1, "README.md is not Python: {changed:?}");
        assert_eq!(changed.removed["calc/__init__.py"], set(&[2, 3, 8]));
        assert_eq!(changed.added["calc/__init__.py"], set(&[2, 7]));
        assert_eq!(changed.added["calc/new.py"], set(&[1, 2]));
        assert_eq!(changed.files().len(), 2);
    }

    #[test]
    fn lines_that_look_like_headers_inside_a_hunk_are_content() {
        let diff = modified(
            "m.py",
            "\
@@ -3 +3 @@ def f():
--- a/comment
+++ b/comment
\\ No newline at end of file
",
        );
        let changed = ChangedLines::of_patch(&diff);
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
