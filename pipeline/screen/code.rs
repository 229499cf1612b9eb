//! Reading lines of code the way the signals need, for any language the pipeline
//! meets (Python first; C-like languages by the same rules): a line split into its
//! code and its string literals (comments dropped), the names a line defines
//! (functions, classes, parameters, attributes, constants, config keys), and the code
//! before the fix that names and strings are looked up in.
//!
//! Deliberately a lexer of one line at a time, not a parser: patches are fragments,
//! and a fragment does not parse.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use crate::git::patch_text::{DiffFile, LineKind};
use crate::screen::text::regex;

/// A line of code, split.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LexedLine {
    /// The code with string literals blanked (`""`) and comments removed.
    pub code: String,
    /// The contents of the string literals, in order (escapes left as written).
    pub literals: Vec<String>,
}

/// Splits a line into code and string literals. Python's and C-like comments (`#`,
/// `//`) end the code; a triple quote opens a literal that runs to the end of the line.
pub fn lex(line: &str) -> LexedLine {
    let mut lexed = LexedLine::default();
    let chars: Vec<char> = line.chars().collect();
    let mut index = 0;
    while index < chars.len() {
        let c = chars[index];
        if c == '#' || (c == '/' && chars.get(index + 1) == Some(&'/')) {
            break;
        }
        if c == '"' || c == '\'' || c == '`' {
            let triple = chars.get(index + 1) == Some(&c) && chars.get(index + 2) == Some(&c);
            let mut literal = String::new();
            index += if triple { 3 } else { 1 };
            while index < chars.len() {
                let d = chars[index];
                if d == '\\' && index + 1 < chars.len() {
                    literal.push(d);
                    literal.push(chars[index + 1]);
                    index += 2;
                    continue;
                }
                if d == c && (!triple || (chars.get(index + 1) == Some(&c) && chars.get(index + 2) == Some(&c))) {
                    index += if triple { 3 } else { 1 };
                    break;
                }
                literal.push(d);
                index += 1;
            }
            lexed.code.push_str("\"\"");
            lexed.literals.push(literal);
            continue;
        }
        lexed.code.push(c);
        index += 1;
    }
    lexed
}

/// The line up to its comment (`#`, `//`) outside string literals.
pub fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut previous = ' ';
    for (index, c) in line.char_indices() {
        match quote {
            Some(open) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == open {
                    quote = None;
                }
            }
            None if c == '"' || c == '\'' || c == '`' => quote = Some(c),
            None if c == '#' => return &line[..index],
            None if c == '/' && previous == '/' => return &line[..index - 1],
            None => {}
        }
        previous = c;
    }
    line
}

/// The identifiers of a line's code (not of its strings or comments).
pub fn identifiers(line: &str) -> Vec<String> {
    let lexed = lex(line);
    super::text::IDENTIFIER.find_iter(&lexed.code).map(|word| word.as_str().to_string()).collect()
}

crate::spelled::spelled_enum! {
    /// What kind of name a definition introduces.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    pub enum NameKind {
        Function => "function",
        Class => "class",
        Parameter => "parameter",
        Attribute => "attribute",
        Constant => "constant",
        ConfigKey => "config key",
    }
}

static FUNCTION: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:def|fn|func|function)\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)")
});
static CLASS: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"^\s*(?:pub\s+|export\s+|public\s+|abstract\s+|final\s+)*(?:class|struct|enum|trait|interface)\s+([A-Za-z_]\w*)",
    )
});
static ATTRIBUTE: LazyLock<Regex> = LazyLock::new(|| regex(r"^\s*(?:self|this)\.([A-Za-z_]\w*)\s*(?::[^=]*)?=[^=]"));
static CONSTANT: LazyLock<Regex> = LazyLock::new(|| regex(r"^\s*([A-Z][A-Z0-9_]{2,})\s*(?::[^=]*)?=[^=]"));
/// A key in a subscript or a dict literal: `["key"]`, `'key': value`.
static CONFIG_KEY: LazyLock<Regex> =
    LazyLock::new(|| regex(r#"(?:\[\s*["']([A-Za-z_][\w.\-]*)["']\s*\]|["']([A-Za-z_][\w.\-]*)["']\s*:)"#));
/// A parameter on a line of a signature: `name`, `name: type`, `name=default`, `*args`.
static PARAMETER: LazyLock<Regex> = LazyLock::new(|| regex(r"^\s*\*{0,2}([A-Za-z_]\w*)\s*(?:[:=,)]|$)"));

/// A name that an added line defines.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Definition {
    pub name: String,
    pub kind: NameKind,
}

/// The names that the added lines of `file` define. Parameters are read on the
/// signature's own line and on the lines of a signature that spans several.
pub fn definitions<'f, 'a>(file: &'f DiffFile<'a>) -> Vec<(Definition, &'f crate::git::patch_text::DiffLine<'a>)> {
    let mut out = Vec::new();
    // Open parentheses of a `def` signature still being read (context lines count:
    // a parameter added inside an existing signature is new too).
    let mut signature_depth: i32 = 0;
    for line in file.lines().filter(|line| line.kind != LineKind::Removed) {
        let added = line.kind == LineKind::Added;
        let lexed = lex(line.text);
        let mut push = |name: &str, kind| {
            if added && name.len() > 2 && !matches!(name, "self" | "cls" | "this") {
                out.push((Definition { name: name.to_string(), kind }, line));
            }
        };
        if signature_depth > 0 {
            for part in lexed.code.split(',') {
                if let Some(found) = PARAMETER.captures(part) {
                    push(&found[1], NameKind::Parameter);
                }
            }
            signature_depth += depth_change(&lexed.code);
            continue;
        }
        if let Some(found) = FUNCTION.captures(&lexed.code) {
            push(&found[1], NameKind::Function);
            if let Some(open) = lexed.code.find('(') {
                let inside = &lexed.code[open + 1..];
                let inside = inside.rsplit_once(')').map(|(params, _)| params).unwrap_or(inside);
                for part in inside.split(',') {
                    if let Some(found) = PARAMETER.captures(part) {
                        push(&found[1], NameKind::Parameter);
                    }
                }
                signature_depth = depth_change(&lexed.code).max(0);
            }
        } else if let Some(found) = CLASS.captures(&lexed.code) {
            push(&found[1], NameKind::Class);
        } else if let Some(found) = ATTRIBUTE.captures(&lexed.code) {
            push(&found[1], NameKind::Attribute);
        } else if let Some(found) = CONSTANT.captures(&lexed.code) {
            push(&found[1], NameKind::Constant);
        }
        // Keys are read from the raw line: they are string literals.
        for found in CONFIG_KEY.captures_iter(line.text) {
            if let Some(key) = found.get(1).or_else(|| found.get(2)) {
                push(key.as_str(), NameKind::ConfigKey);
            }
        }
    }
    out
}

fn depth_change(code: &str) -> i32 {
    code.chars()
        .map(|c| {
            if c == '(' {
                1
            } else if c == ')' {
                -1
            } else {
                0
            }
        })
        .sum()
}

/// The code before the fix that names and strings are looked up in: the patches'
/// removed and context lines, and, when the repository's mirror is at hand, the files
/// both patches touch as they were at the base commit.
#[derive(Debug, Clone, Default)]
pub struct CodeBefore {
    text: String,
    words: BTreeSet<String>,
    /// Whether the files came from the mirror.
    pub from_mirror: bool,
}

impl CodeBefore {
    /// From the diffs alone: their removed and context lines.
    pub fn from_diffs(diffs: &[&[DiffFile<'_>]]) -> CodeBefore {
        let mut text = String::new();
        for file in diffs.iter().flat_map(|files| files.iter()) {
            for line in file.lines().filter(|line| line.kind != LineKind::Added) {
                text.push_str(line.text);
                text.push('\n');
            }
        }
        CodeBefore::from_text(text, false)
    }

    /// The diffs' lines plus whole files read from the mirror.
    pub fn with_files(mut self, files: impl IntoIterator<Item = String>) -> CodeBefore {
        let mut read_any = false;
        for content in files {
            self.text.push_str(&content);
            self.text.push('\n');
            read_any = true;
        }
        CodeBefore::from_text(self.text, read_any)
    }

    fn from_text(text: String, from_mirror: bool) -> CodeBefore {
        let words = super::text::IDENTIFIER.find_iter(&text).map(|word| word.as_str().to_string()).collect();
        CodeBefore { text, words, from_mirror }
    }

    /// Whether the code names `name` (as a whole word, case as written).
    pub fn names(&self, name: &str) -> bool {
        self.words.contains(name)
    }

    /// Whether the code holds `text`, ignoring differences of whitespace.
    pub fn holds(&self, text: &str) -> bool {
        let wanted: Vec<&str> = text.split_whitespace().collect();
        if wanted.is_empty() {
            return false;
        }
        // Fast path, then the whitespace-insensitive one on a collapsed copy.
        self.text.contains(text) || collapse(&self.text).contains(&wanted.join(" "))
    }
}

/// Whitespace collapsed to single spaces.
pub fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::patch_text::fixtures::modified;
    use crate::git::patch_text::parse;

    #[test]
    fn lexing_separates_code_strings_and_comments() {
        let lexed = lex(r#"    self.assertEqual(f('a b'), "it's \"x\"")  # why"#);
        assert_eq!(lexed.code, r#"    self.assertEqual(f(""), "")  "#);
        assert_eq!(lexed.literals, ["a b", r#"it's \"x\""#]);
        assert_eq!(lex(r#"x = """doc"#).literals, ["doc"]);
        assert_eq!(identifiers("call(arg, 'text') // comment"), ["call", "arg"]);
        assert_eq!(strip_comment("x = '#1'  # note"), "x = '#1'  ");
        assert_eq!(strip_comment("a // b"), "a ");
    }

    #[test]
    fn definitions_of_added_lines_cover_functions_classes_parameters_attributes_constants_and_keys() {
        let diff = modified(
            "m.py",
            "\
@@ -1,4 +1,12 @@
 def old(a,
-        b):
+        b, strict=False):
     pass
+class NewThing(Base):
+    def id_for_label(self, id_):
+        self.cache_size = 3
+        return None
+MAX_ITEMS = 10
+rcParams['axes.titlepad'] = 4
+def spread(first,
+           second=None):
+    pass
",
        );
        let files = parse(&diff);
        let found: Vec<(String, NameKind)> =
            definitions(&files[0]).into_iter().map(|(definition, _)| (definition.name, definition.kind)).collect();
        assert_eq!(
            found,
            [
                ("strict".to_string(), NameKind::Parameter),
                ("NewThing".to_string(), NameKind::Class),
                ("id_for_label".to_string(), NameKind::Function),
                ("id_".to_string(), NameKind::Parameter),
                ("cache_size".to_string(), NameKind::Attribute),
                ("MAX_ITEMS".to_string(), NameKind::Constant),
                ("axes.titlepad".to_string(), NameKind::ConfigKey),
                ("spread".to_string(), NameKind::Function),
                ("first".to_string(), NameKind::Parameter),
                ("second".to_string(), NameKind::Parameter),
            ]
        );
    }

    #[test]
    fn code_before_holds_the_diffs_old_lines_and_the_mirror_files() {
        let diff = "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n raise ValueError('old   message')\n-x = 1\n+y = 2\n";
        let files = parse(diff);
        let code = CodeBefore::from_diffs(&[&files]);
        assert!(code.names("x") && code.names("ValueError") && !code.names("y"));
        assert!(code.holds("old message"));
        assert!(!code.from_mirror);
        let code = code.with_files(["def helper(): return 'from the tree'".to_string()]);
        assert!(code.from_mirror && code.names("helper") && code.holds("from the tree"));
    }
}
