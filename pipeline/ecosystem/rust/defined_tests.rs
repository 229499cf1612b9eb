//! Whether a patch defines a Rust test: a test id (`vscreen::tests::fits`, the name
//! libtest prints, see [`super`]) maps to the source files that can hold it (its
//! module path read as `src/vscreen.rs` or `src/vscreen/mod.rs` with the rest of the
//! path inline modules, or the crate's root for a bare name), and the patch adds the
//! line that declares `fn fits` under a test attribute in one of them.
//!
//! A gold patch that defines a test (an inline `#[cfg(test)] mod tests` of a source
//! file the fix changes: bat's `src/vscreen.rs`) makes it a test no other fix can
//! pass, so it is no fair label ([`crate::ecosystem::Ecosystem::defined_by_the_patch`]).
//! It does not read `#[path]` attributes: a module moved by one is not found.

use regex::Regex;

use crate::git::patch_text::{self, DiffFile, LineKind};

/// Whether `patch` adds the declaration of the test `id` in a file that can hold it.
pub fn defines_test(id: &str, patch: &str) -> bool {
    let mut path: Vec<&str> = id.split("::").collect();
    let Some(name) = path.pop().filter(|name| is_identifier(name)) else { return false };
    // Asked of every test a run reports: a patch that never names the test is passed
    // over before it is parsed.
    if !path.iter().all(|module| is_identifier(module)) || !patch.contains(name) {
        return false;
    }
    let files = patch_text::parse(patch);
    files.iter().filter(|file| holds_module_path(file.path(), &path)).any(|file| declares_test(file, name))
}

fn is_identifier(word: &str) -> bool {
    !word.is_empty() && word.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// Whether the file at `path` can hold a function of module path `modules` (inside
/// its target): the module of some leading part of the path is the file (its later
/// parts inline modules), anywhere in a workspace (`crates/x/src/...`).
fn holds_module_path(path: &str, modules: &[&str]) -> bool {
    let within_src = |relative: &str| path == format!("src/{relative}") || path.ends_with(&format!("/src/{relative}"));
    if within_src("lib.rs") || within_src("main.rs") {
        return true;
    }
    // A test target's or a binary's root holds bare names and inline modules.
    if let Some((folder, file)) = path.rsplit_once('/') {
        let folder_name = folder.rsplit('/').next().unwrap_or(folder);
        if (folder_name == "tests" || folder.ends_with("src/bin")) && file.ends_with(".rs") {
            return true;
        }
    }
    (1..=modules.len()).any(|depth| {
        let folder = modules[..depth].join("/");
        within_src(&format!("{folder}.rs")) || within_src(&format!("{folder}/mod.rs"))
    })
}

/// Whether the file's diff adds `fn name` with a test attribute above it (`#[test]`,
/// `#[tokio::test]`, `#[rstest]`, `#[test_case(..)]`), among the lines the diff shows.
fn declares_test(file: &DiffFile<'_>, name: &str) -> bool {
    let declaration = Regex::new(&format!(
        r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?fn\s+{}\s*[<(]",
        regex::escape(name)
    ))
    .expect("an escaped name makes a valid pattern");
    file.hunks.iter().any(|hunk| {
        let shown: Vec<_> = hunk.lines.iter().filter(|line| line.kind != LineKind::Removed).collect();
        shown.iter().enumerate().any(|(index, line)| {
            line.kind == LineKind::Added && declaration.is_match(line.text) && {
                // The attributes and comments right above it, up to the previous item.
                let above = shown[..index].iter().rev().map(|line| line.text.trim()).take_while(|text| {
                    text.is_empty()
                        || text.starts_with("#[")
                        || text.starts_with("//")
                        || !(text.ends_with('}') || text.ends_with(';') || text.ends_with('{'))
                });
                // `#[cfg(test)]` marks a helper, not a test.
                above
                    .into_iter()
                    .any(|text| text.starts_with("#[") && !text.starts_with("#[cfg") && text.contains("test"))
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fix that adds a source file with an inline test module, and one more test to
    /// the crate root's existing module.
    const FIX: &str = "\
diff --git a/src/vscreen.rs b/src/vscreen.rs
new file mode 100644
--- /dev/null
+++ b/src/vscreen.rs
@@ -0,0 +1,15 @@
+pub fn width() -> usize { 80 }
+
+#[cfg(test)]
+mod tests {
+    use super::*;
+
+    #[test]
+    fn fits() { assert_eq!(width(), 80); }
+
+    #[cfg(test)]
+    fn helper() -> usize { 1 }
+
+    #[tokio::test]
+    async fn waits() {}
+}
diff --git a/crates/core/src/lib.rs b/crates/core/src/lib.rs
--- a/crates/core/src/lib.rs
+++ b/crates/core/src/lib.rs
@@ -3,4 +3,9 @@ mod tests {
     #[test]
     fn old_one() {}
+
+    #[test]
+    #[should_panic]
+    // Overflows.
+    fn new_one() { panic!() }
 }
";

    #[test]
    fn a_test_declared_under_a_test_attribute_in_the_file_of_its_module_is_the_patchs() {
        assert!(defines_test("vscreen::tests::fits", FIX));
        assert!(defines_test("vscreen::tests::waits", FIX), "an async test of another framework");
        assert!(defines_test("tests::new_one", FIX), "the crate root of a workspace member");
    }

    #[test]
    fn a_test_the_patch_only_shows_or_a_function_that_is_no_test_is_not_the_patchs() {
        assert!(!defines_test("tests::old_one", FIX), "a context line: the test was there before");
        assert!(!defines_test("vscreen::tests::helper", FIX), "no test attribute, only `cfg(test)`");
        assert!(!defines_test("other::tests::fits", FIX), "no file of module `other` in the patch");
        assert!(!defines_test("vscreen::tests::fit", FIX), "another name");
        assert!(!defines_test("vscreen::tests::fits", ""), "an empty patch");
    }

    #[test]
    fn a_module_path_maps_to_its_file_or_its_folders_mod_rs_anywhere_in_a_workspace() {
        assert!(holds_module_path("src/vscreen.rs", &["vscreen", "tests"]));
        assert!(holds_module_path("src/vscreen/mod.rs", &["vscreen", "tests"]));
        assert!(holds_module_path("crates/bat/src/a/b.rs", &["a", "b", "tests"]));
        assert!(holds_module_path("src/lib.rs", &["tests"]));
        assert!(holds_module_path("tests/add.rs", &[]));
        assert!(!holds_module_path("src/vscreen.rs", &["other", "tests"]));
        assert!(!holds_module_path("src/a/b.rs", &["b", "tests"]), "b is a's, not the root's");
        assert!(!holds_module_path("docs/src/vscreen.md", &["vscreen"]));
    }
}
