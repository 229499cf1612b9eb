//! A gold patch as something to edit: its files (header lines kept as they are),
//! their hunks and every hunk line with its marker, and the one way back to text,
//! which counts each hunk's lines again and moves its new-side start by what the
//! earlier hunks of its file changed. A mutant is this structure with one edit, so
//! what it renders is a unified diff against the base commit that `git apply` takes.

/// One line of a hunk: its marker (`+`, `-`, ` `, or `\` for "No newline at end of
/// file") and its text without the marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkLine {
    pub marker: char,
    pub text: String,
}

impl HunkLine {
    pub fn added(&self) -> bool {
        self.marker == '+'
    }

    pub fn removed(&self) -> bool {
        self.marker == '-'
    }
}

/// One hunk: its old-side start, the function context after its second `@@`, and
/// its lines. The counts and the new-side start are computed when rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub old_start: u32,
    /// The new-side start as the gold patch gives it: the line numbers a reader of
    /// the fixed file knows.
    pub new_start: u32,
    pub context: String,
    pub lines: Vec<HunkLine>,
}

impl Hunk {
    fn old_count(&self) -> u32 {
        self.lines.iter().filter(|line| line.marker == '-' || line.marker == ' ').count() as u32
    }

    fn new_count(&self) -> u32 {
        self.lines.iter().filter(|line| line.marker == '+' || line.marker == ' ').count() as u32
    }

    /// The number in the fixed file of line `index` (an added or context line), as
    /// the gold patch numbers it.
    pub fn new_line_of(&self, index: usize) -> u32 {
        let before = self.lines[..index].iter().filter(|line| line.marker == '+' || line.marker == ' ').count();
        self.new_start + before as u32
    }

    /// Whether line `index` carries a "No newline at end of file" mark: such a line
    /// is never removed or turned into another kind (the mark would move).
    pub fn line_is_marked(&self, index: usize) -> bool {
        self.lines.get(index + 1).is_some_and(|next| next.marker == '\\')
    }
}

/// One file of the patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchFile {
    /// The lines before the first hunk (`diff --git`, modes, `---`, `+++`), as given.
    pub header: Vec<String>,
    /// The path in the fixed tree (the old one for a deleted file).
    pub path: String,
    /// The patch creates the file.
    pub created: bool,
    /// The patch deletes the file, or changes it as binary: never mutated.
    pub opaque: bool,
    pub hunks: Vec<Hunk>,
}

/// The whole patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    pub files: Vec<PatchFile>,
}

impl Patch {
    /// Reads a unified git diff. A hunk ends by its line counts, as `git apply` reads
    /// it; text that is not part of any file (a preamble) is dropped.
    pub fn parse(text: &str) -> Patch {
        let mut files: Vec<PatchFile> = Vec::new();
        let (mut old_left, mut new_left) = (0u32, 0u32);
        for line in text.lines() {
            let in_hunk = old_left > 0 || new_left > 0;
            if in_hunk {
                let Some(hunk) = files.last_mut().and_then(|file| file.hunks.last_mut()) else { break };
                let (marker, rest) = split_marker(line);
                match marker {
                    '-' => old_left = old_left.saturating_sub(1),
                    '+' => new_left = new_left.saturating_sub(1),
                    '\\' => {}
                    _ => {
                        old_left = old_left.saturating_sub(1);
                        new_left = new_left.saturating_sub(1);
                    }
                }
                hunk.lines.push(HunkLine { marker, text: rest.to_string() });
                continue;
            }
            if let Some(mark) = line.strip_prefix('\\') {
                // The mark of the hunk's last line.
                if let Some(hunk) = files.last_mut().and_then(|file| file.hunks.last_mut()) {
                    hunk.lines.push(HunkLine { marker: '\\', text: mark.to_string() });
                }
                continue;
            }
            if line.starts_with("diff --git ") {
                files.push(PatchFile {
                    header: vec![line.to_string()],
                    path: path_of_diff_line(line),
                    created: false,
                    opaque: false,
                    hunks: Vec::new(),
                });
                continue;
            }
            if let Some(header) = line.strip_prefix("@@ ").and_then(parse_hunk_header) {
                let Some(file) = files.last_mut() else { continue };
                old_left = header.old_count;
                new_left = header.new_count;
                file.hunks.push(Hunk {
                    old_start: header.old_start,
                    new_start: header.new_start,
                    context: header.context,
                    lines: Vec::new(),
                });
                continue;
            }
            let Some(file) = files.last_mut() else { continue };
            if !file.hunks.is_empty() {
                continue;
            }
            if line.starts_with("new file mode") || line == "--- /dev/null" {
                file.created = true;
            }
            if line.starts_with("deleted file mode")
                || line == "+++ /dev/null"
                || line == "GIT binary patch"
                || line.starts_with("Binary files ")
            {
                file.opaque = true;
            }
            if let Some(path) = line.strip_prefix("+++ b/") {
                file.path = path.to_string();
            }
            file.header.push(line.to_string());
        }
        Patch { files }
    }

    /// The unified diff: counts computed from the lines, each hunk's new-side start
    /// moved by the lines the earlier hunks of its file add or remove. A file left
    /// with no hunk is left out (unless the patch only renames or changes its mode).
    pub fn render(&self) -> String {
        let mut out = String::new();
        for file in &self.files {
            if file.hunks.is_empty() && !file.opaque && file.header.iter().any(|line| line.starts_with("--- ")) {
                continue;
            }
            for line in &file.header {
                out.push_str(line);
                out.push('\n');
            }
            let mut shift: i64 = 0;
            for hunk in &file.hunks {
                let (old_count, new_count) = (hunk.old_count(), hunk.new_count());
                let new_start = if new_count == 0 {
                    // A hunk that leaves nothing names the line before it.
                    (i64::from(hunk.old_start) + shift - 1).max(0)
                } else if old_count == 0 {
                    i64::from(hunk.old_start) + shift + 1
                } else {
                    i64::from(hunk.old_start) + shift
                };
                let context = if hunk.context.is_empty() { String::new() } else { format!(" {}", hunk.context) };
                out.push_str(&format!(
                    "@@ -{},{} +{},{} @@{context}\n",
                    hunk.old_start, old_count, new_start, new_count
                ));
                for line in &hunk.lines {
                    out.push(line.marker);
                    out.push_str(&line.text);
                    out.push('\n');
                }
                shift += i64::from(new_count) - i64::from(old_count);
            }
        }
        out
    }
}

fn split_marker(line: &str) -> (char, &str) {
    match line.chars().next() {
        Some(marker @ ('+' | '-' | ' ' | '\\')) => (marker, &line[1..]),
        // An empty line inside a hunk is an empty context line (some tools strip the space).
        _ => (' ', line),
    }
}

/// The `b/` path of a `diff --git a/x b/x` line (the last ` b/` splits them).
fn path_of_diff_line(line: &str) -> String {
    let rest = line.trim_start_matches("diff --git ");
    match rest.rfind(" b/") {
        Some(at) => rest[at + 3..].to_string(),
        None => rest.trim_start_matches("a/").to_string(),
    }
}

struct HunkHeader {
    old_start: u32,
    old_count: u32,
    new_start: u32,
    new_count: u32,
    context: String,
}

/// `-a,b +c,d @@ context` (after the first `@@ `).
fn parse_hunk_header(rest: &str) -> Option<HunkHeader> {
    let (ranges, context) = rest.split_once("@@")?;
    let mut parts = ranges.split_whitespace();
    let range = |part: &str, sign: char| -> Option<(u32, u32)> {
        let part = part.strip_prefix(sign)?;
        match part.split_once(',') {
            Some((start, count)) => Some((start.parse().ok()?, count.parse().ok()?)),
            None => Some((part.parse().ok()?, 1)),
        }
    };
    let (old_start, old_count) = range(parts.next()?, '-')?;
    let (new_start, new_count) = range(parts.next()?, '+')?;
    Some(HunkHeader { old_start, old_count, new_start, new_count, context: context.trim().to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_HUNKS: &str = "diff --git a/src/calc.py b/src/calc.py
--- a/src/calc.py
+++ b/src/calc.py
@@ -1,3 +1,5 @@ import os
 def clamp(x, low, high):
-    return x
+    if x < low:
+        return low
+    return x
 
@@ -10,3 +12,4 @@ def other():
 a = 1
+b = 2
 c = 3
 d = 4
";

    #[test]
    fn a_patch_renders_back_to_itself() {
        let patch = Patch::parse(TWO_HUNKS);
        assert_eq!(patch.files.len(), 1);
        assert_eq!(patch.files[0].path, "src/calc.py");
        assert_eq!(patch.files[0].hunks.len(), 2);
        assert_eq!(patch.files[0].hunks[0].context, "import os");
        assert_eq!(patch.render(), TWO_HUNKS);
    }

    #[test]
    fn an_edit_recounts_its_hunk_and_moves_the_next_hunks_new_start() {
        let mut patch = Patch::parse(TWO_HUNKS);
        // Revert the first hunk's change: drop the added lines, keep the removed one.
        let hunk = &mut patch.files[0].hunks[0];
        hunk.lines.retain(|line| line.marker != '+');
        hunk.lines[1].marker = ' ';
        let rendered = patch.render();
        assert!(rendered.contains("@@ -1,3 +1,3 @@ import os\n"), "{rendered}");
        assert!(rendered.contains("@@ -10,3 +10,4 @@ def other():\n"), "{rendered}");
    }

    #[test]
    fn a_file_left_with_no_hunk_is_left_out_and_a_lone_hunk_header_counts_as_one_line() {
        let text = "diff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n@@ -3 +3 @@\n-x := 1\n+x := 2\n\
                    diff --git a/b.go b/b.go\n--- a/b.go\n+++ b/b.go\n@@ -1,2 +1,2 @@\n-y\n+z\n w\n";
        let mut patch = Patch::parse(text);
        assert_eq!(patch.files[0].hunks[0].lines.len(), 2);
        patch.files[0].hunks.clear();
        let rendered = patch.render();
        assert!(!rendered.contains("a.go"), "{rendered}");
        assert!(rendered.starts_with("diff --git a/b.go b/b.go\n"), "{rendered}");
    }

    #[test]
    fn created_deleted_and_binary_files_are_told_apart_and_the_no_newline_mark_stays_with_its_line() {
        let text = "diff --git a/new.rs b/new.rs\nnew file mode 100644\n--- /dev/null\n+++ b/new.rs\n@@ -0,0 +1,2 @@\n+fn a() {}\n+fn b() {}\n\\ No newline at end of file\n\
                    diff --git a/old.rs b/old.rs\ndeleted file mode 100644\n--- a/old.rs\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n";
        let patch = Patch::parse(text);
        assert!(patch.files[0].created && !patch.files[0].opaque);
        assert!(patch.files[1].opaque);
        assert!(patch.files[0].hunks[0].line_is_marked(1));
        assert_eq!(patch.render(), text.replace("@@ -1 +0,0 @@", "@@ -1,1 +0,0 @@"));
    }
}
