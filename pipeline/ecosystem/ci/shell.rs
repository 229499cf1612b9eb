//! What the shell lines of a CI step say, read as words, never run: which of them run
//! tests (a language's runner or the project's own test script), the Debian packages
//! an `apt-get install` names, and the variables a command line sets for itself
//! (`RUSTFLAGS="--cfg x" cargo test`).

/// The logical lines of a script: backslash continuations joined, blank lines and
/// comments left out.
pub fn logical_lines(script: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current = String::new();
    for line in script.lines() {
        let trimmed = line.trim();
        if let Some(start) = trimmed.strip_suffix('\\') {
            current.push_str(start.trim_end());
            current.push(' ');
            continue;
        }
        current.push_str(trimmed);
        let logical = std::mem::take(&mut current);
        let logical = logical.trim();
        if !logical.is_empty() && !logical.starts_with('#') {
            lines.push(logical.to_string());
        }
    }
    let rest = current.trim();
    if !rest.is_empty() && !rest.starts_with('#') {
        lines.push(rest.to_string());
    }
    lines
}

/// The simple commands of a line: split at `&&`, `||`, `;` and `|` outside quotes,
/// each as its words (quotes removed; `$VAR` left as written).
pub fn segments(line: &str) -> Vec<Vec<String>> {
    let mut segments: Vec<Vec<String>> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    let end_word = |word: &mut String, in_word: &mut bool, words: &mut Vec<String>| {
        if *in_word {
            words.push(std::mem::take(word));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(open), c) if c == open => quote = None,
            (Some('"'), '\\') => {
                if let Some(next) = chars.next() {
                    word.push(next);
                }
            }
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                if let Some(next) = chars.next() {
                    word.push(next);
                    in_word = true;
                }
            }
            (None, '#') if !in_word => break,
            (None, c) if c.is_whitespace() => end_word(&mut word, &mut in_word, &mut words),
            (None, ';' | '|' | '&') => {
                end_word(&mut word, &mut in_word, &mut words);
                // `&&`, `||`, `|&`: one separator; a lone `&` (background) too.
                if matches!(chars.peek(), Some('&' | '|')) {
                    chars.next();
                }
                if !words.is_empty() {
                    segments.push(std::mem::take(&mut words));
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut words);
    if !words.is_empty() {
        segments.push(words);
    }
    segments
}

/// Whether a word is a variable assignment (`NAME=value`).
pub fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// A command's words split into the assignments before its program and the words from
/// its program on, past the wrappers that only change how it runs (`sudo`, `env`,
/// `time`, `timeout 10m`, `xvfb-run -a`, `nice`, `stdbuf -oL`, and the runners of a
/// project's environment: `uv run`, `poetry run`, `pipenv run`, `pdm run`, `hatch run`).
pub fn program(words: &[String]) -> (Vec<(String, String)>, &[String]) {
    let mut assignments = Vec::new();
    let mut index = 0;
    while index < words.len() {
        let word = words[index].as_str();
        if is_assignment(word) {
            let (name, value) = word.split_once('=').expect("an assignment has `=`");
            assignments.push((name.to_string(), value.to_string()));
            index += 1;
            continue;
        }
        let takes_option_words = matches!(word, "sudo" | "env" | "xvfb-run" | "nice" | "stdbuf" | "exec" | "command");
        if takes_option_words || word == "time" {
            index += 1;
            while index < words.len() && words[index].starts_with('-') && takes_option_words {
                // `sudo -E`, `xvfb-run -a`, `stdbuf -oL`; `sudo -u user` takes a value.
                let takes_value = matches!(words[index].as_str(), "-u" | "-g" | "-s" | "-n" | "--server-args");
                index += if takes_value { 2 } else { 1 };
            }
            continue;
        }
        if word == "timeout" {
            index += 1;
            while index < words.len() && words[index].starts_with('-') {
                index += 1;
            }
            index += 1; // the duration
            continue;
        }
        if matches!(word, "uv" | "poetry" | "pipenv" | "pdm" | "hatch" | "rye")
            && words.get(index + 1).map(String::as_str) == Some("run")
        {
            index += 2;
            while index < words.len() && words[index].starts_with('-') {
                index += 1;
            }
            continue;
        }
        break;
    }
    (assignments, &words[index.min(words.len())..])
}

/// The last component of a program's path (`./mvnw` -> `mvnw`).
fn base(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Whether a word is a Python interpreter (`python`, `python3`, `python3.11`).
fn is_python(word: &str) -> bool {
    let name = base(word);
    name == "python"
        || name.strip_prefix("python").is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// Whether a script path is one of the project's own test scripts: a path (with a
/// folder, `./`, or a script's extension) whose name or folder says `test`
/// (`./tests/run-tests.py`, `runtests.py`, `tests/cli-tests/run.py`, `./runtest`).
fn is_test_script(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    let scripted = [".sh", ".py", ".pl", ".tcl", ".bats", ".bash"].iter().any(|extension| lower.ends_with(extension));
    let path = lower.starts_with("./") || lower.contains('/') || scripted;
    path && !lower.starts_with('-') && !lower.contains("://") && lower.contains("test")
}

/// The kinds of test commands the readers recognise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runner {
    Pytest,
    Unittest,
    Tox,
    GoTest,
    Cargo,
    /// `npm test`, `npm run test:unit`, `yarn test`, `pnpm run test`, or a Node runner
    /// run directly (`npx jest`).
    Node,
    Maven,
    Gradle,
    /// `make check`, `make test`, `ninja test`.
    Make,
    CTest,
    /// The project's own test script (`python tests/run-tests.py`, `./tests/cli.sh`).
    Script,
}

/// The words of a Node command that name a script to run (`npm run test:unit`,
/// `yarn test`, `pnpm -r test`): the script's name.
pub fn node_script(words: &[String]) -> Option<String> {
    let (tool, rest) = words.split_first()?;
    if !matches!(base(tool), "npm" | "yarn" | "pnpm" | "bun") {
        return None;
    }
    let rest: Vec<&str> = rest.iter().map(String::as_str).filter(|word| !word.starts_with('-')).collect();
    match rest.as_slice() {
        ["run" | "run-script", name, ..] => Some((*name).to_string()),
        ["test" | "t", ..] => Some("test".to_string()),
        [name, ..] if base(tool) != "npm" && !matches!(*name, "install" | "add" | "exec" | "dlx" | "ci" | "x") => {
            Some((*name).to_string())
        }
        _ => None,
    }
}

/// The runner a command runs, when it runs tests (`words`: from its program on, see
/// [`program`]).
pub fn test_runner(words: &[String]) -> Option<Runner> {
    let program = base(words.first()?);
    let word = |index: usize| words.get(index).map(String::as_str).unwrap_or_default();
    let targets = || words[1..].iter().filter(|word| !word.starts_with('-') && !is_assignment(word));
    match program {
        "pytest" | "py.test" => return Some(Runner::Pytest),
        "tox" | "nox" => return Some(Runner::Tox),
        "gotestsum" => return Some(Runner::GoTest),
        "ctest" => return Some(Runner::CTest),
        "bats" => return Some(Runner::Script),
        "go" if word(1) == "test" => return Some(Runner::GoTest),
        "cargo" | "cross" => {
            // `cargo test --no-run` only builds (tokio's loom job builds with `--cfg loom`).
            let subcommands: Vec<&String> = targets().filter(|word| !word.starts_with('+')).take(2).collect();
            let builds_only = words.iter().any(|word| word == "--no-run");
            if !builds_only && subcommands.iter().any(|word| matches!(word.as_str(), "test" | "nextest")) {
                return Some(Runner::Cargo);
            }
            return None;
        }
        "npm" | "yarn" | "pnpm" | "bun" => {
            return node_script(words).filter(|name| name.contains("test")).map(|_| Runner::Node);
        }
        "npx" | "jest" | "mocha" | "vitest" | "ava" | "karma" => {
            let runner = if program == "npx" { base(word(1)) } else { program };
            return matches!(runner, "jest" | "mocha" | "vitest" | "ava" | "karma" | "tap").then_some(Runner::Node);
        }
        "node" if word(1) == "--test" => return Some(Runner::Node),
        "mvn" | "mvnw" => {
            let skipped = words.iter().any(|word| word == "-DskipTests" || word.starts_with("-Dmaven.test.skip=true"));
            let goal =
                targets().any(|word| matches!(word.as_str(), "test" | "verify" | "install" | "integration-test"));
            return (goal && !skipped).then_some(Runner::Maven);
        }
        "gradle" | "gradlew" => {
            let task = targets().any(|word| {
                matches!(word.as_str(), "test" | "check" | "build")
                    || word.ends_with(":test")
                    || word.ends_with(":check")
            });
            return task.then_some(Runner::Gradle);
        }
        "make" | "gmake" | "ninja" => {
            let mut index = 1;
            while index < words.len() {
                let current = words[index].as_str();
                index += 1;
                if matches!(current, "-C" | "-f" | "-j" | "-l" | "-o" | "-W" | "--directory" | "--file") {
                    index += 1;
                    continue;
                }
                if current.starts_with('-') || is_assignment(current) {
                    continue;
                }
                let lower = current.to_ascii_lowercase();
                if lower.contains("test") || lower.contains("check") {
                    return Some(Runner::Make);
                }
            }
            return None;
        }
        _ => {}
    }
    if is_python(program) && word(1) == "-m" {
        return match word(2) {
            "pytest" => Some(Runner::Pytest),
            "unittest" => Some(Runner::Unittest),
            "tox" | "nox" => Some(Runner::Tox),
            _ => None,
        };
    }
    // The project's own script, run by an interpreter or as a program.
    let interpreters = ["bash", "sh", "perl", "tclsh", "node", "ruby"];
    let script = if is_python(program) || interpreters.contains(&program) {
        words[1..].iter().find(|word| !word.starts_with('-')).map(String::as_str)
    } else {
        Some(words[0].as_str())
    };
    if script.is_some_and(is_test_script) {
        return Some(Runner::Script);
    }
    // A CI script of the project run with a subcommand that names tests (micropython's
    // `tools/ci.sh unix_minimal_run_tests`, whose function runs its harness).
    let subcommand = words.iter().skip_while(|word| Some(word.as_str()) != script).nth(1);
    let ci_script = script.is_some_and(|script| script.contains('/') && script.ends_with(".sh"));
    (ci_script && subcommand.is_some_and(|word| !word.starts_with('-') && word.to_ascii_lowercase().contains("test")))
        .then_some(Runner::Script)
}

/// The Debian packages an `apt-get install` / `apt install` command names (options,
/// variables, paths and version pins left out).
pub fn apt_packages(words: &[String]) -> Vec<String> {
    let Some(tool) = words.first() else { return Vec::new() };
    if !matches!(base(tool), "apt-get" | "apt" | "aptitude") {
        return Vec::new();
    }
    let Some(install) = words.iter().position(|word| word == "install") else { return Vec::new() };
    words[install + 1..]
        .iter()
        .filter(|word| !word.starts_with('-') && !word.contains('$') && !word.contains('/') && !word.contains('*'))
        .map(|word| word.split(['=', ':']).next().unwrap_or_default().to_string())
        .filter(|name| {
            name.len() > 1
                && name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+.-".contains(c))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        segments(line).into_iter().next().unwrap_or_default()
    }

    fn runner(line: &str) -> Option<Runner> {
        segments(line).iter().find_map(|words| test_runner(program(words).1))
    }

    #[test]
    fn lines_join_their_continuations_and_split_into_commands() {
        let script = "# build\nsudo apt-get update && \\\n  sudo apt-get install -y libonig-dev \\\n    valgrind\n\nmake check\n";
        assert_eq!(
            logical_lines(script),
            vec!["sudo apt-get update && sudo apt-get install -y libonig-dev valgrind", "make check"]
        );
        let parts =
            segments("cd build && RUSTFLAGS=\"--cfg tokio_unstable\" cargo test --all-features | tee log; echo '#x'");
        assert_eq!(parts.len(), 4, "{parts:?}");
        assert_eq!(parts[1], vec!["RUSTFLAGS=--cfg tokio_unstable", "cargo", "test", "--all-features"]);
        assert_eq!(parts[3], vec!["echo", "#x"]);
        let (assignments, rest) = program(&parts[1]);
        assert_eq!(assignments, vec![("RUSTFLAGS".to_string(), "--cfg tokio_unstable".to_string())]);
        assert_eq!(rest[0], "cargo");
    }

    #[test]
    fn test_commands_of_every_language_and_the_projects_own_scripts_are_recognised() {
        let cases = [
            ("pytest -p no:cacheprovider tests", Some(Runner::Pytest)),
            ("python -m pytest -x", Some(Runner::Pytest)),
            ("uv run --frozen pytest", Some(Runner::Pytest)),
            ("python3 -m unittest discover", Some(Runner::Unittest)),
            ("tox -e py38", Some(Runner::Tox)),
            ("go test -race -tags integration ./...", Some(Runner::GoTest)),
            ("cargo +nightly test --all-features", Some(Runner::Cargo)),
            ("cargo nextest run --workspace", Some(Runner::Cargo)),
            ("cargo build --release", None),
            ("cargo test --no-run --lib --features full", None),
            ("cargo hack check --each-feature", None),
            ("cargo hack test --each-feature", Some(Runner::Cargo)),
            ("npm test", Some(Runner::Node)),
            ("npm run test:unit -- --ci", Some(Runner::Node)),
            ("yarn test", Some(Runner::Node)),
            ("pnpm -r test", Some(Runner::Node)),
            ("npm run lint", None),
            ("npx jest --ci", Some(Runner::Node)),
            ("./mvnw -B -Pci verify", Some(Runner::Maven)),
            ("mvn -B -DskipTests package", None),
            ("mvn -B install -DskipTests", None),
            ("./gradlew :core:test", Some(Runner::Gradle)),
            ("make -j4 check", Some(Runner::Make)),
            ("make -C build test", Some(Runner::Make)),
            ("make", None),
            ("ctest -L unit --output-on-failure", Some(Runner::CTest)),
            ("cd ports/unix && make test", Some(Runner::Make)),
            ("python tests/run-tests.py -j1", Some(Runner::Script)),
            ("./tests/playTests.sh --test-large-data", Some(Runner::Script)),
            ("sudo -E timeout 30m ./runtest --verbose", Some(Runner::Script)),
            ("tools/ci.sh unix_minimal_run_tests", Some(Runner::Script)),
            ("bash tools/ci.sh unix_standard_run_tests", Some(Runner::Script)),
            ("tools/ci.sh unix_minimal_build", None),
            ("./configure --enable-test", None),
            ("python setup.py build_ext", None),
            ("echo test", None),
        ];
        for (line, expected) in cases {
            assert_eq!(runner(line), expected, "{line}");
        }
        assert_eq!(node_script(&words("npm run test:unit -- --ci")).as_deref(), Some("test:unit"));
        assert_eq!(node_script(&words("yarn test")).as_deref(), Some("test"));
    }

    #[test]
    fn apt_installs_name_their_packages_only() {
        let line = "sudo apt-get install -y --no-install-recommends libonig-dev valgrind=1:3.19 gcc-multilib:i386 \
                    ./local.deb $EXTRA 'lib*'";
        let words = &segments(line)[0];
        assert_eq!(apt_packages(program(words).1), vec!["libonig-dev", "valgrind", "gcc-multilib"]);
        assert!(apt_packages(program(&segments("sudo apt-get update")[0]).1).is_empty());
        assert!(apt_packages(program(&segments("brew install onig")[0]).1).is_empty());
    }
}
