//! `demo-fixtures OUT_DIR`: the offline demo's world. Two synthetic Python
//! repositories and a Go module, with real git history (`OUT_DIR/repos/<owner>__<name>.git`, bare,
//! with tags and `refs/pull/N/head`), their GitHub side as simulator fixtures
//! (`OUT_DIR/fixtures/`), and what the pipeline must make of them
//! (`OUT_DIR/expected.json`), which `scripts/demo.sh` checks.
//!
//! The pull requests cover what a real repository throws at the pipeline: a clean
//! fix with a regression test, a fix without tests, a fix whose test patch also adds
//! a flaky test, a "fix" whose gold patch does not make its test pass, a PR that
//! closes an issue of another repository, and a PR closed without merging. Issues
//! have comments from before the fix (hints) and after it (not hints).

#![allow(dead_code)]
// A command: it prints what it made.
#![allow(clippy::disallowed_macros)]

#[path = "../github_sim/data.rs"]
mod data;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use data::{Fixtures, IssueSpec, PullSpec, SimRepo};

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text).expect("a valid time").with_timezone(&Utc)
}

/// A repository built through the `git` command in a work tree, then cloned bare.
struct GitRepo {
    work: PathBuf,
}

impl GitRepo {
    fn init(work: PathBuf) -> GitRepo {
        fs_err::create_dir_all(&work).unwrap();
        let repo = GitRepo { work };
        repo.git(&["init", "--quiet", "--initial-branch=main"], None);
        repo
    }

    fn git(&self, args: &[&str], date: Option<&str>) -> String {
        let mut command = Command::new("git");
        command
            .current_dir(&self.work)
            .args(["-c", "user.name=Demo Maintainer", "-c", "user.email=maintainer@example.com"])
            .args(["-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"])
            .args(args);
        if let Some(date) = date {
            command.env("GIT_AUTHOR_DATE", date).env("GIT_COMMITTER_DATE", date);
        }
        let output = command.output().expect("git runs");
        assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).trim().to_string()
    }

    /// Writes `files` on top of `parent` and commits; returns the new sha.
    fn commit(&self, parent: &str, date: &str, message: &str, files: &[(&str, &str)]) -> String {
        self.git(&["checkout", "--quiet", "--detach", parent], None);
        self.first_commit(date, message, files)
    }

    /// Writes `files` on top of the checked-out tree (none at first) and commits.
    fn first_commit(&self, date: &str, message: &str, files: &[(&str, &str)]) -> String {
        for (path, content) in files {
            let path = self.work.join(path);
            fs_err::create_dir_all(path.parent().unwrap()).unwrap();
            fs_err::write(path, content).unwrap();
        }
        self.git(&["add", "--all"], None);
        self.git(&["commit", "--quiet", "-m", message], Some(date));
        self.git(&["rev-parse", "HEAD"], None)
    }

    fn set_ref(&self, name: &str, sha: &str) {
        self.git(&["update-ref", name, sha], None);
    }

    /// A bare clone with every ref, including `refs/pull/*`.
    fn publish(&self, bare: &Path) {
        let _ = fs_err::remove_dir_all(bare);
        let output = Command::new("git")
            .args(["clone", "--quiet", "--mirror"])
            .arg(&self.work)
            .arg(bare)
            .output()
            .expect("git runs");
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    }
}

/// One pull request of the demo: its GitHub side and where its commits are.
struct Pull<'a> {
    number: u64,
    title: &'a str,
    body: &'a str,
    created: &'a str,
    /// `None`: closed without merging.
    merged: Option<&'a str>,
    base_sha: String,
    head_sha: String,
}

struct Issue<'a> {
    number: u64,
    title: &'a str,
    body: &'a str,
    created: &'a str,
    closed: Option<&'a str>,
    /// (when, author, text)
    comments: Vec<(&'a str, &'a str, &'a str)>,
}

/// Adds the PRs and issues to the simulator's fixtures; each PR's commit messages come
/// from `repo` (what GitHub's GraphQL `commits` connection answers).
fn add_to(sim: &mut SimRepo, slug: &str, repo: &GitRepo, pulls: &[Pull], issues: &[Issue], next_comment_id: &mut u64) {
    for pull in pulls {
        let closed = pull.merged.map(at).unwrap_or_else(|| at(pull.created) + chrono::Duration::days(1));
        let mut value: Value = data::pull_request(
            slug,
            &PullSpec {
                number: pull.number,
                title: pull.title.to_string(),
                body: Some(pull.body.to_string()),
                author: "contributor".into(),
                created_at: at(pull.created),
                updated_at: closed,
                closed_at: Some(closed),
                merged_at: pull.merged.map(at),
                labels: Vec::new(),
            },
        );
        value["base"]["sha"] = json!(pull.base_sha);
        value["head"]["sha"] = json!(pull.head_sha);
        value["head"]["ref"] = json!(format!("fix-{}", pull.number));
        let range = format!("{}..{}", pull.base_sha, pull.head_sha);
        let log = repo.git(&["log", "--reverse", "--format=%B%x00", &range], None);
        let messages: Vec<&str> = log.split('\0').map(str::trim).filter(|message| !message.is_empty()).collect();
        value["_commit_messages"] = json!(messages);
        sim.pulls.push(value);
    }
    for issue in issues {
        let updated = issue.comments.last().map(|(when, _, _)| at(when)).unwrap_or(at(issue.created));
        sim.issues.push(data::issue(
            slug,
            &IssueSpec {
                number: issue.number,
                title: issue.title.to_string(),
                body: Some(issue.body.to_string()),
                author: "reporter".into(),
                created_at: at(issue.created),
                updated_at: updated.max(issue.closed.map(at).unwrap_or(updated)),
                closed_at: issue.closed.map(at),
                labels: vec!["bug".into()],
                comments: issue.comments.len() as u32,
            },
        ));
        for (when, author, text) in &issue.comments {
            *next_comment_id += 1;
            sim.comments.push(data::comment(slug, *next_comment_id, issue.number, author, text, at(when), at(when)));
        }
    }
}

const PYPROJECT_CALC: &str = r#"[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "calc"
version = "1.0.0"
description = "A small calculator (swe-harvest demo)"
requires-python = ">=3.9"

[project.optional-dependencies]
test = ["pytest"]

[tool.setuptools]
packages = ["calc"]
"#;

const OPS_V1: &str = r#""""Arithmetic operations."""


def add(a, b):
    return a + b


def subtract(a, b):
    return a - b


def divide(a, b):
    if b == 0:
        return None
    return a / b


def power(base, exponent):
    return base ** exponent


def square_root(value):
    return value ** 0.5
"#;

const TEST_OPS_V1: &str = r#"from calc.ops import add, divide, subtract


def test_add():
    assert add(2, 3) == 5


def test_subtract():
    assert subtract(5, 3) == 2


def test_divide():
    assert divide(6, 3) == 2
"#;

fn calculator(root: &Path, fixtures: &mut Fixtures, expected: &mut Expected, comment_ids: &mut u64) {
    let slug = "demo-org/calculator";
    let repo = GitRepo::init(root.join("work/calculator"));
    let c0 = repo.first_commit(
        "2024-01-02T10:00:00Z",
        "Initial calculator",
        &[
            ("pyproject.toml", PYPROJECT_CALC),
            ("README.md", "# calc\n\nA small calculator.\n"),
            ("calc/__init__.py", "__version__ = \"1.0.0\"\n"),
            ("calc/ops.py", OPS_V1),
            ("tests/test_ops.py", TEST_OPS_V1),
        ],
    );
    repo.git(&["tag", "v1.0", &c0], None);

    // #2 fixes #1: the clean task. (A ValueError, not ZeroDivisionError: without its
    // `raise`, `a / b` raises ZeroDivisionError by itself, and probe's mutant that
    // drops the line would be the same fix.)
    let ops_v2 = OPS_V1.replace(
        "    if b == 0:\n        return None\n",
        "    if b == 0:\n        raise ValueError(\"division by zero\")\n",
    );
    let test_v2 = TEST_OPS_V1.replace(
        "from calc.ops import add, divide, subtract\n",
        "import pytest\n\nfrom calc.ops import add, divide, subtract\n",
    ) + "\n\ndef test_divide_by_zero():\n    with pytest.raises(ValueError):\n        divide(1, 0)\n";
    let h2 = repo.commit(
        &c0,
        "2024-01-07T09:00:00Z",
        "Raise ValueError in divide()",
        &[("calc/ops.py", &ops_v2), ("tests/test_ops.py", &test_v2)],
    );

    // #4 closes #3 without a test.
    let ops_v4 = ops_v2.replace("def divide(a, b):", "def multiply(a, b):\n    return a * b\n\n\ndef divide(a, b):");
    let h4 = repo.commit(&h2, "2024-01-11T09:00:00Z", "Add multiply()", &[("calc/ops.py", &ops_v4)]);

    // #6 fixes #5; its test patch also adds a flaky test.
    let ops_v6 = ops_v4.replace(
        "def power(base, exponent):\n    return base ** exponent\n",
        "def power(base, exponent):\n    if base == 0 and exponent < 0:\n        raise ValueError(\"zero cannot be raised to a negative power\")\n    return base ** exponent\n",
    );
    // Strong tests: every way the new condition could be wrong is checked (probe
    // finds no wrong fix that passes them).
    let test_power = "import pytest\n\nfrom calc.ops import power\n\n\ndef test_power_basic():\n    assert power(2, 3) == 8\n    assert power(2, -1) == 0.5\n    assert power(0, 2) == 0\n    assert power(0, 0) == 1\n\n\ndef test_power_zero_negative():\n    with pytest.raises(ValueError):\n        power(0, -1)\n";
    // Flaky by construction: it fails in every other validation attempt, the way a
    // timing-dependent test fails now and then.
    let test_timing = "import os\n\n\ndef test_timing_budget():\n    attempt = int(os.environ.get(\"SWE_HARVEST_ATTEMPT\", \"1\"))\n    assert attempt % 2 == 1, \"over the time budget\"\n";
    let h6 = repo.commit(
        &h4,
        "2024-01-13T09:00:00Z",
        "Reject zero to a negative power",
        &[("calc/ops.py", &ops_v6), ("tests/test_power.py", test_power), ("tests/test_timing.py", test_timing)],
    );

    // #8 "fixes" #7, but its gold patch does not make the new test pass.
    let ops_v8 = ops_v6.replace(
        "def square_root(value):\n    return value ** 0.5\n",
        "def square_root(value):\n    \"\"\"The square root of `value`.\"\"\"\n    return abs(value) ** 0.5\n",
    );
    let test_sqrt = "import pytest\n\nfrom calc.ops import square_root\n\n\ndef test_square_root_of_negative_raises():\n    with pytest.raises(ValueError):\n        square_root(-4)\n";
    let h8 = repo.commit(
        &h6,
        "2024-01-16T09:00:00Z",
        "square_root: handle negative input",
        &[("calc/ops.py", &ops_v8), ("tests/test_sqrt.py", test_sqrt)],
    );

    // #9 closes an issue of another repository.
    let ops_v9 =
        ops_v8.replace("def subtract(a, b):\n    return a - b\n", "def subtract(a, b):\n    return round(a - b, 12)\n");
    let test_v9 = test_v2.clone() + "\n\ndef test_subtract_floats():\n    assert subtract(0.3, 0.1) == 0.2\n";
    let h9 = repo.commit(
        &h8,
        "2024-01-18T09:00:00Z",
        "Round subtraction like otherlib",
        &[("calc/ops.py", &ops_v9), ("tests/test_ops.py", &test_v9)],
    );

    // #10 is closed without merging.
    let h10 = repo.commit(
        &h9,
        "2024-01-19T09:00:00Z",
        "Rewrite divide()",
        &[("calc/ops.py", &ops_v9.replace("division by zero", "cannot divide by zero"))],
    );

    for (number, sha) in [(2, &h2), (4, &h4), (6, &h6), (8, &h8), (9, &h9), (10, &h10)] {
        repo.set_ref(&format!("refs/pull/{number}/head"), sha);
    }
    repo.git(&["checkout", "--quiet", "-B", "main", &h9], None);
    repo.publish(&root.join("repos/demo-org__calculator.git"));

    let pulls = [
        Pull {
            number: 2,
            title: "Raise ValueError in divide()",
            body: "Fixes #1.\n\nAdds a regression test.",
            created: "2024-01-07T10:00:00Z",
            merged: Some("2024-01-08T10:00:00Z"),
            base_sha: c0.clone(),
            head_sha: h2.clone(),
        },
        Pull {
            number: 4,
            title: "Add multiply()",
            body: "Closes #3",
            created: "2024-01-11T10:00:00Z",
            merged: Some("2024-01-11T12:00:00Z"),
            base_sha: h2.clone(),
            head_sha: h4.clone(),
        },
        Pull {
            number: 6,
            title: "Reject zero to a negative power",
            body: "fixes: #5\n\n<!-- Fixes #3 (an old template line) -->",
            created: "2024-01-13T10:00:00Z",
            merged: Some("2024-01-14T10:00:00Z"),
            base_sha: h4.clone(),
            head_sha: h6.clone(),
        },
        Pull {
            number: 8,
            title: "square_root: handle negative input",
            body: "Resolves https://github.com/demo-org/calculator/issues/7",
            created: "2024-01-16T10:00:00Z",
            merged: Some("2024-01-17T10:00:00Z"),
            base_sha: h6.clone(),
            head_sha: h8.clone(),
        },
        Pull {
            number: 9,
            title: "Round subtraction like otherlib",
            body: "Fixes other-org/otherlib#3",
            created: "2024-01-18T10:00:00Z",
            merged: Some("2024-01-18T12:00:00Z"),
            base_sha: h8.clone(),
            head_sha: h9.clone(),
        },
        Pull {
            number: 10,
            title: "Rewrite divide()",
            body: "Fixes #1",
            created: "2024-01-19T10:00:00Z",
            merged: None,
            base_sha: h9.clone(),
            head_sha: h10.clone(),
        },
    ];
    let issues = [
        Issue {
            number: 1,
            title: "divide() returns None when dividing by zero",
            body: "`divide(1, 0)` returns `None`; callers then crash far away.",
            created: "2024-01-05T08:00:00Z",
            closed: Some("2024-01-08T10:00:00Z"),
            comments: vec![
                ("2024-01-06T08:00:00Z", "maintainer", "Confirmed. It should raise a ValueError that says so."),
                ("2024-01-09T08:00:00Z", "reporter", "Thanks, works now."),
            ],
        },
        Issue {
            number: 3,
            title: "Add multiply()",
            body: "There is no multiplication.",
            created: "2024-01-10T08:00:00Z",
            closed: Some("2024-01-11T12:00:00Z"),
            comments: vec![],
        },
        Issue {
            number: 5,
            title: "power(0, -1) raises a bare ZeroDivisionError",
            body: "It should say what is wrong: a ValueError.",
            created: "2024-01-12T08:00:00Z",
            closed: Some("2024-01-14T10:00:00Z"),
            comments: vec![],
        },
        Issue {
            number: 7,
            title: "square_root(-4) returns a complex number",
            body: "Expected a ValueError.",
            created: "2024-01-15T08:00:00Z",
            closed: Some("2024-01-17T10:00:00Z"),
            comments: vec![],
        },
    ];
    let sim = fixtures.repos.entry(slug.to_string()).or_default();
    add_to(sim, slug, &repo, &pulls, &issues, comment_ids);

    expected.release.extend(["demo-org__calculator-2".to_string(), "demo-org__calculator-6".to_string()]);
    expected.dropped.insert(format!("crawl {slug} 10"), "not_merged".into());
    expected.dropped.insert(format!("extract {slug} 4"), "no_test_change".into());
    expected.dropped.insert(format!("extract {slug} 9"), "no_linked_issue".into());
    expected.dropped.insert(format!("validate {slug} demo-org__calculator-8"), "no_fail_to_pass".into());
    expected
        .fail_to_pass
        .insert("demo-org__calculator-2".into(), vec!["tests/test_ops.py::test_divide_by_zero".into()]);
    expected
        .fail_to_pass
        .insert("demo-org__calculator-6".into(), vec!["tests/test_power.py::test_power_zero_negative".into()]);
    expected.flaky.insert("demo-org__calculator-6".into(), vec!["tests/test_timing.py::test_timing_budget".into()]);
    expected.strong_tests.extend(["demo-org__calculator-2".to_string(), "demo-org__calculator-6".to_string()]);
    expected.verdicts.insert("demo-org__calculator-2".into(), "keep".into());
    expected.verdicts.insert("demo-org__calculator-6".into(), "flag".into());
    expected
        .hints
        .insert("demo-org__calculator-2".into(), "Confirmed. It should raise a ValueError that says so.".into());
    expected.not_in_hints.insert("demo-org__calculator-2".into(), "Thanks, works now.".into());
}

fn textkit(root: &Path, fixtures: &mut Fixtures, expected: &mut Expected, comment_ids: &mut u64) {
    let slug = "demo-org/textkit";
    let repo = GitRepo::init(root.join("work/textkit"));
    let pyproject = PYPROJECT_CALC
        .replace("name = \"calc\"", "name = \"textkit\"")
        .replace("version = \"1.0.0\"", "version = \"0.3.0\"")
        .replace("A small calculator", "Text helpers")
        .replace("packages = [\"calc\"]", "packages = [\"textkit\"]");
    let slug_v1 = "import re\n\n\ndef slugify(text):\n    \"\"\"Lower-case `text` and join its words with dashes.\"\"\"\n    return re.sub(r\"[^a-z0-9]+\", \"-\", text.lower())\n";
    let test_v1 = "from textkit.slug import slugify\n\n\ndef test_slugify_simple():\n    assert slugify(\"Hello World\") == \"hello-world\"\n";
    let short_v1 = "def shorten(text, width):\n    \"\"\"Cut `text` to at most `width` characters.\"\"\"\n    return text[:width]\n";
    let test_short_v1 = "from textkit.short import shorten\n\n\ndef test_shorten_keeps_short_text():\n    assert shorten(\"hello\", 10) == \"hello\"\n";
    let c0 = repo.first_commit(
        "2024-02-01T10:00:00Z",
        "Initial textkit",
        &[
            ("pyproject.toml", &pyproject),
            ("textkit/__init__.py", "__version__ = \"0.3.0\"\n"),
            ("textkit/slug.py", slug_v1),
            ("textkit/short.py", short_v1),
            ("tests/test_slug.py", test_v1),
            ("tests/test_short.py", test_short_v1),
        ],
    );
    repo.git(&["tag", "v0.3.0", &c0], None);
    let slug_v2 = slug_v1.replace(
        "return re.sub(r\"[^a-z0-9]+\", \"-\", text.lower())",
        "return re.sub(r\"[^a-z0-9]+\", \"-\", text.lower()).strip(\"-\")",
    );
    let test_v2 = test_v1.to_string()
        + "\n\ndef test_slugify_strips_dashes():\n    assert slugify(\"Hello, World!\") == \"hello-world\"\n";
    let h2 = repo.commit(
        &c0,
        "2024-02-05T09:00:00Z",
        "slugify: strip leading and trailing dashes\n\nResolves #1",
        &[("textkit/slug.py", &slug_v2), ("tests/test_slug.py", &test_v2)],
    );
    // #4 fixes #3, a fix of two behaviours (cut at a word, mark the cut) whose test
    // checks one (the mark): weak tests by construction, which probe shows with a
    // wrong fix that passes them.
    let short_v4 = "def shorten(text, width):\n    \"\"\"Cut `text` to at most `width` characters, at a word, marking the cut with an ellipsis.\"\"\"\n    if len(text) <= width:\n        return text\n    cut = text[: width - 1]\n    if \" \" in cut:\n        cut = cut[: cut.rindex(\" \")]\n    return cut + \"\u{2026}\"\n";
    let test_short_v4 = test_short_v1.to_string()
        + "\n\ndef test_shorten_marks_the_cut():\n    assert shorten(\"hello world\", 8).endswith(\"\u{2026}\")\n";
    let h4 = repo.commit(
        &h2,
        "2024-02-09T09:00:00Z",
        "shorten: cut at a word and mark the cut",
        &[("textkit/short.py", short_v4), ("tests/test_short.py", &test_short_v4)],
    );
    repo.set_ref("refs/pull/2/head", &h2);
    repo.set_ref("refs/pull/4/head", &h4);
    repo.git(&["checkout", "--quiet", "-B", "main", &h4], None);
    repo.publish(&root.join("repos/demo-org__textkit.git"));

    let pulls = [
        Pull {
            number: 2,
            title: "slugify: strip dashes",
            body: "See the commit message.",
            created: "2024-02-05T10:00:00Z",
            merged: Some("2024-02-06T10:00:00Z"),
            base_sha: c0.clone(),
            head_sha: h2.clone(),
        },
        Pull {
            number: 4,
            title: "shorten: cut at a word, with an ellipsis",
            body: "Fixes #3.",
            created: "2024-02-09T10:00:00Z",
            merged: Some("2024-02-10T10:00:00Z"),
            base_sha: h2.clone(),
            head_sha: h4.clone(),
        },
    ];
    let issues = [
        Issue {
            number: 1,
            title: "slugify keeps a trailing dash",
            body: "`slugify(\"Hello, World!\")` gives `hello-world-`.",
            created: "2024-02-03T08:00:00Z",
            closed: Some("2024-02-06T10:00:00Z"),
            comments: vec![
                ("2024-02-04T08:00:00Z", "maintainer", "A leading dash has the same problem."),
                ("2024-02-07T08:00:00Z", "maintainer", "Released in 0.3.1."),
            ],
        },
        Issue {
            number: 3,
            title: "shorten() cuts words in half without saying so",
            body: "`shorten(\"hello world\", 8)` gives `hello wo`. It should end at a whole word and show that it \
                   cut the text with an ellipsis (`\u{2026}`), within the width: `hello\u{2026}`.",
            created: "2024-02-08T08:00:00Z",
            closed: Some("2024-02-10T10:00:00Z"),
            comments: vec![],
        },
    ];
    let sim = fixtures.repos.entry(slug.to_string()).or_default();
    add_to(sim, slug, &repo, &pulls, &issues, comment_ids);

    expected.release.extend(["demo-org__textkit-2".to_string(), "demo-org__textkit-4".to_string()]);
    expected
        .fail_to_pass
        .insert("demo-org__textkit-2".into(), vec!["tests/test_slug.py::test_slugify_strips_dashes".into()]);
    expected
        .fail_to_pass
        .insert("demo-org__textkit-4".into(), vec!["tests/test_short.py::test_shorten_marks_the_cut".into()]);
    expected.weak_tests.push("demo-org__textkit-4".into());
    expected.verdicts.insert("demo-org__textkit-4".into(), "flag".into());
    expected.verdicts.insert("demo-org__textkit-2".into(), "keep".into());
    expected.hints.insert("demo-org__textkit-2".into(), "A leading dash has the same problem.".into());
    expected.strong_tests.push("demo-org__textkit-2".into());
    expected.not_in_hints.insert("demo-org__textkit-2".into(), "Released in 0.3.1.".into());
}

const GO_MOD: &str = "module example.com/gounits\n\ngo 1.19\n";

const CLAMP_V1: &str = "package gounits\n\n// Clamp limits v to the range [lo, hi].\nfunc Clamp(v, lo, hi int) int {\n\tif v < lo {\n\t\treturn lo\n\t}\n\tif v > hi {\n\t\treturn v\n\t}\n\treturn v\n}\n";

const CLAMP_TEST_V1: &str = "package gounits\n\nimport \"testing\"\n\nfunc TestClampLow(t *testing.T) {\n\tif got := Clamp(-5, 0, 10); got != 0 {\n\t\tt.Fatalf(\"Clamp(-5, 0, 10) = %d, want 0\", got)\n\t}\n}\n";

/// A Go module without dependencies (so the demo needs no module proxy): its task is
/// validated with `go test` in a Go base image, as a Rust or Go repository of a
/// user's would be, with no per-repository config.
fn gounits(root: &Path, fixtures: &mut Fixtures, expected: &mut Expected, comment_ids: &mut u64) {
    let slug = "demo-org/gounits";
    let repo = GitRepo::init(root.join("work/gounits"));
    let c0 = repo.first_commit(
        "2024-03-01T10:00:00Z",
        "Initial gounits",
        &[
            ("go.mod", GO_MOD),
            ("README.md", "# gounits\n\nSmall numeric helpers.\n"),
            ("clamp.go", CLAMP_V1),
            ("clamp_test.go", CLAMP_TEST_V1),
        ],
    );
    let clamp_v2 = CLAMP_V1.replace("if v > hi {\n\t\treturn v", "if v > hi {\n\t\treturn hi");
    let test_v2 = CLAMP_TEST_V1.to_string()
        + "\nfunc TestClampHigh(t *testing.T) {\n\tif got := Clamp(15, 0, 10); got != 10 {\n\t\tt.Fatalf(\"Clamp(15, 0, 10) = %d, want 10\", got)\n\t}\n}\n";
    let h2 = repo.commit(
        &c0,
        "2024-03-05T09:00:00Z",
        "Clamp: values above the range become hi\n\nFixes #1",
        &[("clamp.go", &clamp_v2), ("clamp_test.go", &test_v2)],
    );
    repo.set_ref("refs/pull/2/head", &h2);
    repo.git(&["checkout", "--quiet", "-B", "main", &h2], None);
    repo.publish(&root.join("repos/demo-org__gounits.git"));

    let pulls = [Pull {
        number: 2,
        title: "Clamp: cap values above the range",
        body: "See the commit message.",
        created: "2024-03-05T10:00:00Z",
        merged: Some("2024-03-06T10:00:00Z"),
        base_sha: c0.clone(),
        head_sha: h2.clone(),
    }];
    let issues = [Issue {
        number: 1,
        title: "Clamp(15, 0, 10) returns 15",
        body: "Values above the range come back unchanged.",
        created: "2024-03-02T08:00:00Z",
        closed: Some("2024-03-06T10:00:00Z"),
        comments: vec![("2024-03-03T08:00:00Z", "maintainer", "The upper branch returns v instead of hi.")],
    }];
    let sim = fixtures.repos.entry(slug.to_string()).or_default();
    add_to(sim, slug, &repo, &pulls, &issues, comment_ids);

    expected.release.push("demo-org__gounits-2".into());
    expected.fail_to_pass.insert("demo-org__gounits-2".into(), vec!["TestClampHigh".into()]);
    expected.hints.insert("demo-org__gounits-2".into(), "The upper branch returns v instead of hi.".into());
    expected.strong_tests.push("demo-org__gounits-2".into());
    // Its issue shows the call and its result, and its test's `t.Fatalf` message is no
    // asserted string: no flag, keep.
    expected.verdicts.insert("demo-org__gounits-2".into(), "keep".into());
}

/// What the demo must end with; `scripts/demo.sh` checks every entry.
#[derive(Default, serde::Serialize)]
struct Expected {
    /// Instance ids the release holds, exactly.
    release: Vec<String>,
    /// "stage repo item" -> drop reason.
    dropped: BTreeMap<String, String>,
    fail_to_pass: BTreeMap<String, Vec<String>>,
    flaky: BTreeMap<String, Vec<String>>,
    hints: BTreeMap<String, String>,
    not_in_hints: BTreeMap<String, String>,
    /// Tasks whose tests probe must find weak: a surviving mutant in the release row
    /// and the `weak_tests` flag.
    weak_tests: Vec<String>,
    /// Tasks whose tests reject every viable mutant: no survivor, no `weak_tests`.
    strong_tests: Vec<String>,
    /// Instance id -> the screen's verdict (`keep`, `uncertain`, `flag`): the clean
    /// tasks keep; a flag of `screen.flag_on` (flaky tests, a surviving mutant) flags.
    verdicts: BTreeMap<String, String>,
}

fn main() {
    let Some(root) = std::env::args().nth(1).map(PathBuf::from) else {
        eprintln!("usage: demo-fixtures OUT_DIR");
        std::process::exit(2);
    };
    if root.exists() {
        fs_err::remove_dir_all(&root).expect("OUT_DIR can be replaced");
    }
    let mut fixtures = Fixtures::default();
    let mut expected = Expected::default();
    let mut comment_ids = 9_000_000;
    calculator(&root, &mut fixtures, &mut expected, &mut comment_ids);
    textkit(&root, &mut fixtures, &mut expected, &mut comment_ids);
    gounits(&root, &mut fixtures, &mut expected, &mut comment_ids);
    expected.release.sort();
    fixtures.save(&root.join("fixtures")).expect("fixtures are written");
    fs_err::write(root.join("expected.json"), serde_json::to_string_pretty(&expected).unwrap()).unwrap();
    fs_err::remove_dir_all(root.join("work")).unwrap();
    println!("{}", root.display());
}
