//! Whether a patch defines a Python test: a doctest of a source module (pytest's id
//! `pkg/mod.py::pkg.mod.Class.method`, from `--doctest-modules`) whose examples the
//! patch adds, a `>>>` line in the docstring of that object. A gold patch that adds
//! one makes a test that no other fix could pass
//! ([`crate::ecosystem::Ecosystem::defined_by_the_patch`]); a test in a test file is
//! the test patch's and never the gold patch's.
//!
//! The object is the nearest `def` or `class` above the added example among the lines
//! the diff shows, else the hunk header's function context. A module's own docstring
//! (`pkg/mod.py::pkg.mod`) is not read: its examples have no such anchor.

use regex::Regex;

use crate::git::patch_text::{self, DiffFile, LineKind};

/// Whether `patch` adds an example to the doctest `id`.
pub fn defines_test(id: &str, patch: &str) -> bool {
    let Some((file, dotted)) = id.split_once("::") else { return false };
    // Asked of every test a run reports: a patch that never names the file is passed
    // over before it is parsed.
    if !file.ends_with(".py") || !patch.contains(file) {
        return false;
    }
    let Some(object) = dotted.rsplit('.').next().filter(|name| is_identifier(name)) else { return false };
    // The module's own docstring (`pkg.mod`, from `pkg/mod.py` or `src/pkg/mod.py`)
    // has no anchor.
    let module = file.trim_end_matches(".py").replace('/', ".");
    if module == dotted || module.ends_with(&format!(".{dotted}")) {
        return false;
    }
    patch_text::parse(patch)
        .iter()
        .filter(|changed| changed.path() == file)
        .any(|changed| adds_example(changed, object))
}

fn is_identifier(word: &str) -> bool {
    !word.is_empty() && word.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// Whether the file's diff adds a `>>>` line whose enclosing `def` or `class` is `object`.
fn adds_example(file: &DiffFile<'_>, object: &str) -> bool {
    let definition = Regex::new(r"^\s*(async\s+def|def|class)\s+(\w+)").expect("valid regex");
    file.hunks.iter().any(|hunk| {
        let mut enclosing: Option<String> = definition.captures(hunk.context).map(|captures| captures[2].to_string());
        hunk.lines.iter().filter(|line| line.kind != LineKind::Removed).any(|line| {
            if let Some(captures) = definition.captures(line.text) {
                enclosing = Some(captures[2].to_string());
                return false;
            }
            line.kind == LineKind::Added
                && line.text.trim_start().starts_with(">>>")
                && enclosing.as_deref() == Some(object)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fix that adds an example to `Quantity.to`'s docstring, and changes the code of
    /// `Quantity.value` (no example added there).
    const FIX: &str = "\
diff --git a/astropy/units/quantity.py b/astropy/units/quantity.py
--- a/astropy/units/quantity.py
+++ b/astropy/units/quantity.py
@@ -10,6 +10,9 @@ class Quantity:
     def to(self, unit):
         \"\"\"Converts.
 
+        >>> Quantity(1, 'm').to('cm')
+        <Quantity 100. cm>
+
         \"\"\"
         return self._to(unit)
@@ -30,3 +33,3 @@ class Quantity:
     def value(self):
-        return self._value
+        return self._value * 1
";

    #[test]
    fn a_doctest_whose_example_the_patch_adds_is_the_patchs() {
        assert!(defines_test("astropy/units/quantity.py::astropy.units.quantity.Quantity.to", FIX));
    }

    #[test]
    fn a_doctest_the_patch_adds_no_example_to_or_a_test_of_another_file_is_not_the_patchs() {
        assert!(!defines_test("astropy/units/quantity.py::astropy.units.quantity.Quantity.value", FIX));
        assert!(!defines_test("astropy/units/core.py::astropy.units.core.Unit.to", FIX), "another file");
        assert!(!defines_test("astropy/units/tests/test_quantity.py::test_to", FIX), "a test file's test");
        assert!(!defines_test("astropy/units/quantity.py::astropy.units.quantity", FIX), "the module's own");
        assert!(!defines_test("docs/units.rst::units.rst", FIX), "a text file's doctest");
    }

    #[test]
    fn a_function_named_as_its_module_is_no_module_docstring() {
        let fix = "diff --git a/src/pkg/area.py b/src/pkg/area.py\n--- a/src/pkg/area.py\n+++ b/src/pkg/area.py\n\
                   @@ -1,2 +1,3 @@\n def area(r):\n     \"\"\"\n+    >>> area(1)\n";
        assert!(defines_test("src/pkg/area.py::pkg.area.area", fix));
        assert!(!defines_test("src/pkg/area.py::pkg.area", fix));
    }

    #[test]
    fn the_enclosing_object_may_come_from_the_hunk_header() {
        let fix = "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -4,2 +4,3 @@ def area(r):\n     \"\"\"\n+    >>> area(1)\n     \"\"\"\n";
        assert!(defines_test("m.py::m.area", fix));
        assert!(!defines_test("m.py::m.volume", fix));
    }
}
