use super::*;

/// The mutants of a patch read without the files before it (no mirror).
fn make_alone(gold: &str, cap: usize) -> Made {
    make(gold, "", cap, &FilesBefore::new())
}

/// A modification of one file: `old` lines become `new` lines, as `git diff` writes it.
fn diff_of(path: &str, old: &str, new: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let output = std::process::Command::new("git").args(args).current_dir(dir.path()).output().unwrap();
        assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    };
    git(&["init", "-q"]);
    let file = dir.path().join(path);
    fs_err::create_dir_all(file.parent().unwrap()).unwrap();
    fs_err::write(&file, old).unwrap();
    git(&["add", "."]);
    git(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"]);
    fs_err::write(&file, new).unwrap();
    git(&["diff", "--no-prefix", "--src-prefix=a/", "--dst-prefix=b/"])
}

/// Applies each mutant to `old` with `git apply` and returns the files it gives.
fn applied(path: &str, old: &str, mutants: &[Mutant]) -> Vec<String> {
    mutants
        .iter()
        .map(|mutant| {
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join(path);
            fs_err::create_dir_all(file.parent().unwrap()).unwrap();
            fs_err::write(&file, old).unwrap();
            fs_err::write(dir.path().join("m.patch"), &mutant.patch).unwrap();
            let output = std::process::Command::new("git")
                .args(["apply", "--verbose", "m.patch"])
                .current_dir(dir.path())
                .output()
                .unwrap();
            assert!(
                output.status.success(),
                "{} does not apply: {}\n{}",
                mutant.id,
                String::from_utf8_lossy(&output.stderr),
                mutant.patch
            );
            fs_err::read_to_string(&file).unwrap()
        })
        .collect()
}

fn by_operator(mutants: &[Mutant], operator: MutationOperator) -> Vec<&Mutant> {
    mutants.iter().filter(|mutant| mutant.operator == operator).collect()
}

const PY_OLD: &str = "import os


def clamp(x, low, high):
    \"\"\"Clamp x.\"\"\"
    return x


def unrelated():
    a = 1
    b = 2
    c = 3
    d = 4
    e = 5
    return a


def parse(text):
    return text
";

const PY_NEW: &str = "import os


def clamp(x, low, high):
    \"\"\"Clamp x into [low, high].\"\"\"
    if x < low and low is not None:
        return low
    if x > high:
        return high
    return x


def unrelated():
    a = 1
    b = 2
    c = 3
    d = 4
    e = 5
    return a


def parse(text):
    text = text.strip()  # the fix
    return text.split(\",\")[0] if text else \"\"
";

#[test]
fn every_operator_makes_python_mutants_that_git_applies_and_each_changes_one_thing() {
    let gold = diff_of("pkg/calc.py", PY_OLD, PY_NEW);
    let made = make_alone(&gold, 1000);
    let fixed: Vec<String> = applied("pkg/calc.py", PY_OLD, &made.mutants);
    assert!(made.candidates >= made.mutants.len());
    for (mutant, file) in made.mutants.iter().zip(&fixed) {
        assert_ne!(file, PY_NEW, "{} is the gold patch itself", mutant.id);
        assert_ne!(file, PY_OLD, "{} is no fix at all", mutant.id);
    }
    let files = |operator| -> Vec<&String> {
        made.mutants.iter().zip(&fixed).filter(|(mutant, _)| mutant.operator == operator).map(|(_, f)| f).collect()
    };
    // Two hunks that change code: each can be left out.
    assert_eq!(files(MutationOperator::OmitHunk).len(), 2);
    assert!(
        files(MutationOperator::OmitHunk)
            .iter()
            .any(|file| file.contains("    return x\n\n\ndef unrelated") && file.contains("text.strip()"))
    );
    // The docstring's change is no mutant; the condition's is.
    assert!(made.mutants.iter().all(|mutant| !mutant.change.contains("Clamp")));
    let negated = files(MutationOperator::NegateCondition);
    assert!(negated.iter().any(|file| file.contains("    if not (x < low and low is not None):\n")), "{negated:?}");
    let dropped_clauses = files(MutationOperator::DropCondition);
    // Dropping `low is not None` (a null check) is no mutant; dropping `x < low` is.
    assert!(!dropped_clauses.iter().any(|file| file.contains("    if x < low:\n")));
    assert!(dropped_clauses.iter().any(|file| file.contains("    if low is not None:\n")));
    let moved = files(MutationOperator::MoveBoundary);
    assert!(moved.iter().any(|file| file.contains("    if x <= low and")));
    assert!(moved.iter().any(|file| file.contains("    if x >= high:")));
    // `return low` alone in its block becomes `pass`; `text = text.strip()` is dropped.
    let dropped = files(MutationOperator::DropStatement);
    assert!(dropped.iter().any(|file| file.contains("def parse(text):\n    return text.split")), "{dropped:?}");
    let emptied = files(MutationOperator::ReturnDefault);
    assert!(emptied.iter().any(|file| file.contains("        return None\n    if x > high")), "{emptied:?}");
    let literals = files(MutationOperator::ReplaceLiteral);
    assert!(literals.iter().any(|file| file.contains("text.split(\"\")[0]")), "{literals:?}");
    assert!(literals.iter().any(|file| file.contains("[1] if text")), "{literals:?}");
    // Every mutant names the function it is in and says what changed.
    let boundary = by_operator(&made.mutants, MutationOperator::MoveBoundary)[0];
    assert_eq!(boundary.function, "clamp");
    assert_eq!(boundary.file, "pkg/calc.py");
    assert_eq!(boundary.line, 6);
    assert!(boundary.change.contains("`<` becomes `<=`"), "{}", boundary.change);
}

#[test]
fn a_changed_line_reverts_to_its_old_text_in_place() {
    let old = "def f(a, b):\n    total = a + b\n    scale = 2\n    return total * scale\n";
    let new = "def f(a, b):\n    total = a - b\n    scale = 3\n    return total * scale\n";
    let gold = diff_of("m.py", old, new);
    let made = make_alone(&gold, 100);
    let reverted = by_operator(&made.mutants, MutationOperator::RevertLine);
    assert_eq!(reverted.len(), 2);
    let files = applied("m.py", old, &made.mutants);
    assert!(files.contains(&"def f(a, b):\n    total = a + b\n    scale = 3\n    return total * scale\n".to_string()));
    assert!(files.contains(&"def f(a, b):\n    total = a - b\n    scale = 2\n    return total * scale\n".to_string()));
    // One hunk: nothing to leave out.
    assert!(by_operator(&made.mutants, MutationOperator::OmitHunk).is_empty());
}

#[test]
fn comments_docs_and_files_that_are_not_code_give_no_mutant() {
    let old = "def f():\n    # old note\n    return 1\n";
    let new = "def f():\n    # a new note about 1 < 2\n    return 1\n";
    assert!(make_alone(&diff_of("m.py", old, new), 100).mutants.is_empty());
    let docs = diff_of("docs/changes.rst", "Changes\n=======\n", "Changes\n=======\n\n- fixed x < 1\n");
    assert_eq!(make_alone(&docs, 100).candidates, 0);
    let c_comment =
        diff_of("a.c", "int f(void) {\n  return 1;\n}\n", "int f(void) {\n  /* x < 1; */\n  return 1;\n}\n");
    assert!(make_alone(&c_comment, 100).mutants.is_empty());
}

#[test]
fn go_mutants_keep_go_syntax_and_returns_give_the_declared_zero_values() {
    let old = "package calc\n\nfunc Clamp(x, low, high int) (int, error) {\n\treturn x, nil\n}\n";
    let new = "package calc\n\nimport \"errors\"\n\nfunc Clamp(x, low, high int) (int, error) {\n\tif low > high {\n\t\treturn 0, errors.New(\"bad range\")\n\t}\n\tif v := x; v < low {\n\t\treturn low, nil\n\t}\n\treturn x, nil\n}\n";
    let gold = diff_of("calc/clamp.go", old, new);
    let made = make_alone(&gold, 100);
    let files = applied("calc/clamp.go", old, &made.mutants);
    let has = |needle: &str| files.iter().any(|file| file.contains(needle));
    assert!(!has("\tif !(low > high) {\n"), "a guard that returns an error is left alone");
    assert!(has("\tif v := x; !(v < low) {\n"));
    assert!(has("\tif v := x; v <= low {\n"));
    assert!(has("\t\treturn 0, nil\n\t}\n\treturn x, nil"), "a return of low gives the zero values: {files:?}");
    // The error message is no literal to replace; the import is no statement to drop.
    assert!(!has("errors.New(\"\")"));
    assert!(made.mutants.iter().all(|mutant| !mutant.change.contains("import")));
    let emptied = by_operator(&made.mutants, MutationOperator::ReturnDefault);
    assert!(emptied.iter().all(|mutant| mutant.function == "Clamp"));
}

#[test]
fn rust_javascript_java_and_c_mutants_are_made_in_each_languages_spelling() {
    let rust_old = "pub fn clamp(x: i32, low: i32) -> i32 {\n    x\n}\n";
    let rust_new =
        "pub fn clamp(x: i32, low: i32) -> i32 {\n    if x < low && low != 0 {\n        return low;\n    }\n    x\n}\n";
    let files = applied("src/lib.rs", rust_old, &make_alone(&diff_of("src/lib.rs", rust_old, rust_new), 100).mutants);
    let has = |files: &[String], needle: &str| files.iter().any(|file| file.contains(needle));
    assert!(has(&files, "    if !(x < low && low != 0) {\n"));
    assert!(has(&files, "    if low != 0 {\n"));
    assert!(has(&files, "        return Default::default();\n"));
    // A function's value, its last line without `return`, is emptied too.
    let tail_old = "pub fn mul(a: i32, b: i32) -> i32 {\n    0\n}\n";
    let tail_new = "pub fn mul(a: i32, b: i32) -> i32 {\n    a * b\n}\n";
    let files = applied("src/mul.rs", tail_old, &make_alone(&diff_of("src/mul.rs", tail_old, tail_new), 100).mutants);
    assert!(has(&files, "pub fn mul(a: i32, b: i32) -> i32 {\n    Default::default()\n}\n"), "{files:?}");

    let js_old = "function clamp(x, low) {\n  return x;\n}\n";
    let js_new = "function clamp(x, low) {\n  if (x < low) {\n    return low;\n  }\n  const label = 'clamped';\n  return x;\n}\n";
    let files = applied("lib/clamp.js", js_old, &make_alone(&diff_of("lib/clamp.js", js_old, js_new), 100).mutants);
    assert!(has(&files, "  if (!(x < low)) {\n"));
    assert!(has(&files, "    return null;\n"));
    assert!(has(&files, "  const label = '';\n"));
    assert!(
        !has(&files, "clamp(x, low) {\n  if (x < low) {\n    return low;\n  }\n  return x;"),
        "a `const` is never dropped"
    );

    let java_old = "class A {\n    public boolean ok(int x) {\n        return true;\n    }\n}\n";
    let java_new = "class A {\n    public boolean ok(int x) {\n        if (x >= 10) {\n            count++;\n            return x > 12;\n        }\n        return true;\n    }\n}\n";
    let made = make_alone(&diff_of("src/A.java", java_old, java_new), 100);
    let files = applied("src/A.java", java_old, &made.mutants);
    assert!(has(&files, "        if (x > 10) {\n"));
    assert!(has(&files, "            return false;\n"), "boolean's default: {files:?}");
    assert!(has(&files, "        if (x >= 10) {\n            return x > 12;"), "count++ dropped");
    assert!(has(&files, "        if (x >= 11) {\n"), "a number moves by one");

    let cpp_old = "int f(int x) {\n  return x;\n}\n";
    let cpp_new = "int f(int x) {\n  if (x > 0) return x - 1;\n  return x;\n}\n";
    let files = applied("src/f.cpp", cpp_old, &make_alone(&diff_of("src/f.cpp", cpp_old, cpp_new), 100).mutants);
    assert!(has(&files, "  if (!(x > 0)) return x - 1;\n"));
    assert!(has(&files, "  if (x > 0) return x + 1;\n"));
}

#[test]
fn the_same_patch_gives_the_same_mutants_and_the_cap_spreads_over_operators() {
    let gold = diff_of("pkg/calc.py", PY_OLD, PY_NEW);
    let all = make_alone(&gold, 1000);
    let again = make_alone(&gold, 1000);
    assert_eq!(all.mutants, again.mutants);
    let four = make_alone(&gold, 4);
    assert_eq!(four.candidates, all.candidates);
    let operators: Vec<MutationOperator> = four.mutants.iter().map(|mutant| mutant.operator).collect();
    // One of each operator the patch allows, in the turn order, before any gets a second.
    let first_round: Vec<MutationOperator> = TURN_ORDER
        .into_iter()
        .filter(|operator| all.mutants.iter().any(|mutant| mutant.operator == *operator))
        .take(4)
        .collect();
    assert_eq!(operators, first_round);
    let ids: BTreeSet<&str> = all.mutants.iter().map(|mutant| mutant.id.as_str()).collect();
    assert_eq!(ids.len(), all.mutants.len(), "ids are unique");
    assert!(make_alone(&gold, 0).mutants.is_empty());
}

#[test]
fn spreading_takes_the_first_the_middle_and_the_quarters_first() {
    let drafts: Vec<Draft> = (0..8)
        .map(|line| Draft {
            operator: MutationOperator::DropStatement,
            file: 0,
            hunk: 0,
            line,
            edit: Edit::Drop,
            change: String::new(),
        })
        .collect();
    let order: Vec<usize> = spread(drafts).into_iter().map(|draft| draft.line).collect();
    assert_eq!(order, [0, 4, 2, 6, 1, 5, 3, 7]);
}

#[test]
fn a_removed_line_may_stay_and_parts_of_a_statement_over_lines_may_go() {
    let old = "def f(path, extra):\n    paths = list(path)\n    paths.sort()\n    return make(\n        paths,\n        strict=True,\n    )\n";
    let new = "def f(path, extra):\n    paths = list(path)\n    return make(\n        paths,\n        strict=True,\n        extra=extra,\n    ) or (\n        fallback\n        or paths\n    )\n";
    let gold = diff_of("m.py", old, new);
    let made = make_alone(&gold, 100);
    let files = applied("m.py", old, &made.mutants);
    let has = |needle: &str| files.iter().any(|file| file.contains(needle));
    // The deleted `paths.sort()` stays.
    assert!(has("    paths = list(path)\n    paths.sort()\n    return make("), "{files:?}");
    let kept = by_operator(&made.mutants, MutationOperator::RevertLine);
    assert!(kept.iter().any(|mutant| mutant.change == "the removed line `paths.sort()` stays"), "{kept:?}");
    // An added argument of a call written over lines is dropped; so is a clause.
    assert!(has("        strict=True,\n    ) or ("), "{files:?}");
    assert!(
        by_operator(&made.mutants, MutationOperator::DropArgument)
            .iter()
            .any(|mutant| mutant.change.contains("extra=extra,"))
    );
    assert!(has("        fallback\n    )\n"), "{files:?}");
    // A line that opens a block is never kept alone, nor is a line the change replaced.
    assert!(kept.iter().all(|mutant| !mutant.change.contains("return make(")));
}

#[test]
fn a_gold_patch_that_only_deletes_a_line_gives_no_mutant_that_is_no_fix_at_all() {
    let old = "def f(x):\n    x = clean(x)\n    return x\n";
    let new = "def f(x):\n    return x\n";
    assert!(make_alone(&diff_of("m.py", old, new), 100).mutants.is_empty());
}

#[test]
fn the_file_before_the_fix_tells_a_docstring_or_an_import_list_that_a_hunk_starts_inside() {
    // The hunks start more than their three lines of context below what opened them.
    let names = "    add,\n    sub,\n    div,\n    mod_,\n    pow_,\n";
    let docs = "    x: a number,\n    y: another,\n    z: a third,\n    w: a fourth,\n";
    let old = format!(
        "from calc.ops import (\n{names})\n\n\ndef f(x):\n    \"\"\"Docs.\n\n{docs}    True or False.\n    \"\"\"\n    return x\n"
    );
    let new = format!(
        "from calc.ops import (\n{names}    mul,\n)\n\n\ndef f(x):\n    \"\"\"Docs.\n\n{docs}    keep = True or False and 1 < 2\n    \"\"\"\n    return x\n"
    );
    let (old, new) = (old.as_str(), new.as_str());
    let gold = diff_of("m.py", old, new);
    // Read alone, the hunks look like code.
    assert!(!make_alone(&gold, 100).mutants.is_empty());
    // Read with the file, one changes an import list, the other a docstring: no mutant.
    let before: FilesBefore = [("m.py".to_string(), old.to_string())].into();
    let made = make(&gold, "", 100, &before);
    assert!(made.mutants.is_empty(), "{:#?}", made.mutants);
}

#[test]
fn annotations_messages_tolerances_and_continued_lines_give_no_mutant() {
    let old = "import warnings\n\n\ndef f(x, atol):\n    return x\n";
    let new = "import warnings\n\n\ndef f(x, atol) -> \"Number\":\n    warnings.filterwarnings(\n        'ignore',\n        message='All-NaN slice encountered')\n    y = \\\n        x + 1\n    converged = abs(x) < atol\n    return y if converged else x\n";
    let gold = diff_of("m.py", old, new);
    let made = make_alone(&gold, 100);
    let changes: Vec<&str> = made.mutants.iter().map(|mutant| mutant.change.as_str()).collect();
    let literals = by_operator(&made.mutants, MutationOperator::ReplaceLiteral);
    assert!(!literals.iter().any(|mutant| mutant.change.contains("Number")), "an annotation is no value: {changes:#?}");
    assert!(!changes.iter().any(|change| change.contains("All-NaN")), "a message is no value: {changes:#?}");
    let moved = by_operator(&made.mutants, MutationOperator::MoveBoundary);
    assert!(
        !moved.iter().any(|mutant| mutant.change.contains("atol")),
        "a tolerance's bound is no boundary: {changes:#?}"
    );
    assert!(
        !changes.iter().any(|change| change.contains("'ignore'")),
        "a warnings filter is no behaviour: {changes:#?}"
    );
    assert!(
        !changes.iter().any(|change| change.contains("keeps its old text") && change.contains("x + 1")),
        "a line after a backslash is part of its statement: {changes:#?}"
    );
    // What is left is real: the step after the backslash, the condition used.
    assert!(changes.iter().any(|change| change.contains("`+` becomes `-`")), "{changes:#?}");
}

#[test]
fn no_operator_takes_more_than_its_share_of_a_tasks_mutants() {
    let old = "NAMES = []\n";
    let new = "NAMES = [\n    'a', 'b', 'c', 'd', 'e', 'f',\n]\nLIMIT = 3\n\n\ndef f(x):\n    return x > LIMIT\n";
    let made = make_alone(&diff_of("m.py", old, new), 8);
    let literals = by_operator(&made.mutants, MutationOperator::ReplaceLiteral).len();
    assert_eq!(literals, 2, "{:#?}", made.mutants);
    assert!(made.mutants.len() > literals);
}

#[test]
fn a_hunk_that_only_quiets_warnings_around_the_same_code_and_a_dead_assignment_kept_give_no_mutant() {
    let old = "import numpy as np\n\n\ndef f(a, b):\n    ratio = a / b\n    steps = 0\n    return ratio\n\n\n\n\n\n\ndef g(x):\n    return x\n";
    let new = "import numpy as np\n\n\ndef f(a, b):\n    with np.errstate(divide='ignore'):\n        ratio = \\\n            a / b\n    return ratio\n\n\n\n\n\n\ndef g(x):\n    return x + 1\n";
    let made = make_alone(&diff_of("m.py", old, new), 100);
    let changes: Vec<&str> = made.mutants.iter().map(|mutant| mutant.change.as_str()).collect();
    // The first hunk only wraps `ratio = a / b` and removes `steps = 0`, which nothing
    // reads: no mutant of it, and so no hunk to leave out (one hunk changes code).
    assert!(by_operator(&made.mutants, MutationOperator::OmitHunk).is_empty(), "{changes:#?}");
    assert!(!changes.iter().any(|change| change.contains("steps = 0")), "{changes:#?}");
    assert!(!changes.iter().any(|change| change.contains("errstate")), "{changes:#?}");
    assert!(changes.iter().any(|change| change.contains("x + 1")), "{changes:#?}");
}

#[test]
fn a_guard_the_issue_did_not_ask_for_and_a_call_that_only_makes_writes_durable_give_no_mutant() {
    let old = "import os\n\n\ndef save(path, data, lower, upper):\n    out = open(path, 'w')\n    out.write(data)\n    return upper - lower\n";
    let new = "import os\n\n\ndef save(path, data, lower, upper):\n    if upper < lower:\n        raise ValueError('upper >= lower is required')\n    out = open(path, 'w')\n    out.write(data)\n    os.fsync(out.fileno())\n    return (upper - lower) / 2\n";
    let made = make_alone(&diff_of("m.py", old, new), 100);
    let changes: Vec<&str> = made.mutants.iter().map(|mutant| mutant.change.as_str()).collect();
    assert!(!changes.iter().any(|change| change.contains("upper < lower") || change.contains("raise")), "{changes:#?}");
    assert!(!changes.iter().any(|change| change.contains("fsync")), "{changes:#?}");
    assert!(
        changes.iter().any(|change| change.contains("(upper - lower) / 2")),
        "the fix's own change is mutated: {changes:#?}"
    );
    // A guard whose error the tests name is the fix under test: it is mutated.
    let tests = "+    with pytest.raises(ValueError):\n+        save('p', 'd', 2, 1)\n";
    let made = make(&diff_of("m.py", old, new), tests, 100, &FilesBefore::new());
    assert!(made.mutants.iter().any(|mutant| mutant.change.contains("upper < lower")), "{:#?}", made.mutants);
    // In Go, a guard returns an error.
    let go_old = "package a\n\nfunc F(x int) (int, error) {\n\treturn x, nil\n}\n";
    let go_new = "package a\n\nimport \"errors\"\n\nfunc F(x int) (int, error) {\n\tif x < 0 {\n\t\treturn 0, errors.New(\"negative\")\n\t}\n\treturn x * 2, nil\n}\n";
    let made = make_alone(&diff_of("a.go", go_old, go_new), 100);
    let changes: Vec<&str> = made.mutants.iter().map(|mutant| mutant.change.as_str()).collect();
    assert!(!changes.iter().any(|change| change.contains("x < 0") || change.contains("negative")), "{changes:#?}");
    assert!(changes.iter().any(|change| change.contains("x * 2")), "{changes:#?}");
}

#[test]
fn a_value_written_on_its_functions_line_is_emptied_in_c_java_and_javascript() {
    let c_old = "int add(int a, int b) { return b < 0 ? a - b : a + b; }\nint mul(int a, int b) { return 0; }\n";
    let c_new = "int add(int a, int b) { return a + b; }\nint mul(int a, int b) { return 0; }\n";
    let files = applied("src/calc.c", c_old, &make_alone(&diff_of("src/calc.c", c_old, c_new), 100).mutants);
    assert!(files.iter().any(|file| file.starts_with("int add(int a, int b) { return 0; }")), "{files:?}");
    let js_old = "exports.add = (a, b) => a;\n";
    let js_new = "exports.add = (a, b) => a;\nexports.mul = (a, b) => a * b;\n";
    let files = applied("lib/calc.js", js_old, &make_alone(&diff_of("lib/calc.js", js_old, js_new), 100).mutants);
    assert!(files.iter().any(|file| file.contains("exports.mul = (a, b) => null;")), "{files:?}");
    let java_old = "class A {\n}\n";
    let java_new = "class A {\n    public static boolean odd(int x) { return x % 2 == 1; }\n}\n";
    let files = applied("src/A.java", java_old, &make_alone(&diff_of("src/A.java", java_old, java_new), 100).mutants);
    assert!(files.iter().any(|file| file.contains("{ return false; }")), "{files:?}");
}

#[test]
fn a_line_that_only_changes_who_may_see_a_thing_is_not_reverted() {
    let old = "class A {\n    char[] chars;\n    int size() { return 0; }\n}\n";
    let new = "class A {\n    private char[] chars;\n    int size() { return chars.length; }\n}\n";
    let made = make_alone(&diff_of("src/A.java", old, new), 100);
    let reverted = by_operator(&made.mutants, MutationOperator::RevertLine);
    assert!(reverted.iter().all(|mutant| !mutant.change.contains("char[] chars")), "{reverted:#?}");
    assert!(reverted.iter().any(|mutant| mutant.change.contains("chars.length")), "{reverted:#?}");
}

#[test]
fn a_lone_brace_or_semicolon_and_a_c_error_message_give_no_mutant() {
    let old = "int f(int x) {\n  if (x < 0) {\n    return ret_error(x, \"bad input\");\n  }\n  return x;\n};\n";
    let new =
        "int f(int x) {\n  if (x < 0) {\n    return ret_error(x, \"x must not be negative\");\n  }\n  return x;\n}\n";
    let made = make_alone(&diff_of("src/f.c", old, new), 100);
    assert!(made.mutants.is_empty(), "{:#?}", made.mutants);
}

#[test]
fn a_null_check_and_the_parts_of_an_error_message_give_no_mutant() {
    let old = "function pick(list) {\n  return list[0];\n}\n";
    let new = "function pick(list, reasons) {\n  if (list && list.length > 0) {\n    return list[0];\n  }\n  throw new Error(\n    reasons.length > 1 ? 'since' : 'because'\n  );\n}\n";
    let made = make_alone(&diff_of("lib/pick.js", old, new), 100);
    let changes: Vec<&str> = made.mutants.iter().map(|mutant| mutant.change.as_str()).collect();
    assert!(!changes.iter().any(|change| change.starts_with("the clause `list` is dropped")), "{changes:#?}");
    assert!(changes.iter().any(|change| change.starts_with("the clause `list.length > 0` is dropped")), "{changes:#?}");
    assert!(!changes.iter().any(|change| change.contains("reasons.length")), "{changes:#?}");
}

#[test]
fn an_error_raised_is_reverted_or_dropped_as_a_whole_but_its_message_is_left_alone() {
    let old = "def divide(a, b):\n    if b == 0:\n        return None\n    return a / b\n";
    let new = "def divide(a, b):\n    if b == 0:\n        raise ValueError(\"division by zero\")\n    return a / b\n";
    // The tests name the error, so the guard is one the issue asked for.
    let test = diff_of(
        "tests/test_ops.py",
        "",
        "def test_divide_by_zero():\n    with pytest.raises(ValueError):\n        divide(1, 0)\n",
    );
    let made = make(&diff_of("calc/ops.py", old, new), &test, 100, &FilesBefore::new());
    let changes: Vec<&str> = made.mutants.iter().map(|mutant| mutant.change.as_str()).collect();
    assert!(changes.iter().any(|change| change.starts_with("the statement `raise ValueError")), "{changes:#?}");
    assert!(!changes.iter().any(|change| change.contains("division by zero\"` becomes")), "{changes:#?}");
    let retyped = old.replace("return None", "raise TypeError(\"division by zero\")");
    // With a second change, keeping the old error is a wrong fix, not the code before the fix.
    let made =
        make(&diff_of("calc/ops.py", &retyped, &new.replace("a / b", "float(a) / b")), &test, 100, &FilesBefore::new());
    let changes: Vec<&str> = made.mutants.iter().map(|mutant| mutant.change.as_str()).collect();
    assert!(changes.iter().any(|change| change.contains("keeps its old text `raise TypeError")), "{changes:#?}");
    let logged =
        "def divide(a, b):\n    if b == 0:\n        return None\n    log.info(\"dividing %s\", a)\n    return a / b\n";
    let made = make(&diff_of("calc/ops.py", old, logged), &test, 100, &FilesBefore::new());
    assert!(made.mutants.is_empty(), "{:#?}", made.mutants);
}
