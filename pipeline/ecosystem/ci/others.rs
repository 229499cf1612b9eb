//! GitLab CI, Azure Pipelines and CircleCI: their jobs' images, services, variables
//! and scripts, as [`super::Job`]s.
//!
//! - GitLab (`.gitlab-ci.yml`): every top-level mapping with a `script` that is not a
//!   template (`.name`) nor a global keyword is a job; `extends:` and `default:` (and
//!   the global `image`, `services`, `variables`, `before_script`) are layered under
//!   it; `image:` and `services:` are images, with `$VAR` resolved from the variables
//!   and `parallel: matrix:`.
//! - Azure (`azure-pipelines.yml`): `stages` > `jobs` > `steps`, or `jobs`, or `steps`
//!   alone; `script`/`bash` steps, the tasks that set up runtimes
//!   (`UsePythonVersion`, `NodeTool`, `UseNode`, `GoTool`, `JavaToolInstaller`) or
//!   run tests (`Maven`, `Gradle`, `Npm`, `CmdLine`, `Bash`); `$(name)` and
//!   `${{ variables.name }}` resolved from the variables and `strategy.matrix`.
//! - CircleCI (`.circleci/config.yml`, version 2 and later): each job's `docker:`
//!   images (the first is where it runs, the others are services), its `executor:`,
//!   `environment:` and `run:` steps, reusable `commands:` expanded once;
//!   `<< parameters.x >>` resolved from the workflows' `matrix:` for that job, else
//!   the parameter's default.

use std::collections::BTreeMap;

use yaml_rust2::Yaml;

use super::yaml::{entries, get, items, scalar, scalar_entries, scalars, script};
use super::{Job, Language, Step, expand, shell};

/// `$NAME` written as `${NAME}`, so that [`expand`] reads both.
fn braced(text: &str) -> String {
    let pattern = regex::Regex::new(r"\$([A-Za-z_][A-Za-z0-9_]*)").expect("valid regex");
    pattern.replace_all(text, "$${${1}}").into_owned()
}

/// Values of names: variables (one value) and matrix axes (several).
type Values = BTreeMap<String, Vec<String>>;

fn lookup_in(values: &Values) -> impl Fn(&str) -> Option<Vec<String>> + '_ {
    move |name: &str| values.get(name).cloned()
}

/// GitLab's keywords at the top level that are no job.
const GITLAB_KEYWORDS: &[&str] = &[
    "stages",
    "variables",
    "image",
    "services",
    "before_script",
    "after_script",
    "cache",
    "default",
    "include",
    "workflow",
    "types",
];

/// A GitLab image or service entry's image (`name:` of a mapping, or the string).
fn gitlab_image(node: &Yaml) -> Option<String> {
    get(node, "name").and_then(scalar).or_else(|| scalar(node))
}

/// A GitLab `variables:` block (a value may be `{value: ..., description: ...}`).
fn gitlab_variables(node: &Yaml) -> Vec<(String, String)> {
    entries(node)
        .into_iter()
        .filter_map(|(name, value)| Some((name, scalar(value).or_else(|| get(value, "value").and_then(scalar))?)))
        .collect()
}

pub(super) fn gitlab_jobs(document: &Yaml, notes: &mut Vec<String>) -> Vec<Job> {
    if let Some(include) = get(document, "include") {
        let named: Vec<String> = items(include)
            .into_iter()
            .filter_map(|entry| {
                scalar(entry).or_else(|| {
                    ["local", "template", "project", "remote"].iter().find_map(|key| get(entry, key).and_then(scalar))
                })
            })
            .collect();
        notes.push(format!(
            "includes {}, which are not read",
            named.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", ")
        ));
    }
    let default = get(document, "default");
    let mut found = Vec::new();
    for (name, job) in entries(document) {
        if name.starts_with('.') || GITLAB_KEYWORDS.contains(&name.as_str()) || !matches!(job, Yaml::Hash(_)) {
            continue;
        }
        // The layers a key is looked up in, the job's own last: the globals, `default:`,
        // the templates it extends (theirs before them, once).
        let mut layers: Vec<&Yaml> = vec![document];
        layers.extend(default);
        let mut templates: Vec<&Yaml> = Vec::new();
        let mut pending: Vec<String> = get(job, "extends").map(scalars).unwrap_or_default();
        while let Some(template) = pending.pop() {
            if let Some(node) = get(document, &template).filter(|node| !templates.contains(node)) {
                templates.insert(0, node);
                pending.extend(get(node, "extends").map(scalars).unwrap_or_default());
            }
        }
        layers.extend(templates);
        layers.push(job);
        let value = |key: &str| layers.iter().rev().find_map(|layer| get(layer, key));
        if value("script").is_none() {
            continue;
        }
        let mut read = Job { name: name.clone(), ..Job::default() };
        for layer in &layers {
            read.env.extend(get(layer, "variables").map(gitlab_variables).unwrap_or_default());
        }
        let mut values: Values = read.env.iter().map(|(name, value)| (name.clone(), vec![value.clone()])).collect();
        if let Some(matrix) = value("parallel").and_then(|parallel| get(parallel, "matrix")) {
            for entry in items(matrix) {
                for (axis, axis_values) in entries(entry) {
                    values.entry(axis).or_default().extend(scalars(axis_values));
                }
            }
        }
        let resolve = |text: &str| expand(&braced(text), "${", "}", &lookup_in(&values));
        if let Some(image) = value("image").and_then(gitlab_image) {
            match resolve(&image) {
                Some(images) => read.images.extend(images),
                None => notes.push(format!("job `{name}`'s image `{image}` names a variable that is not set here")),
            }
        }
        for service in value("services").map(items).unwrap_or_default() {
            if let Some(image) =
                gitlab_image(service).and_then(|image| resolve(&image)).and_then(|images| images.into_iter().next())
            {
                read.services.push((super::service_name(&image), image));
            }
        }
        for key in ["before_script", "script"] {
            for command in value(key).map(script).unwrap_or_default() {
                read.steps.push(Step::of_script(&command, Vec::new()));
            }
        }
        found.push(read);
    }
    found
}

/// Azure's variables: a mapping, or a list of `{name, value}` (groups and templates
/// are not read).
fn azure_variables(node: &Yaml) -> Vec<(String, String)> {
    match node {
        Yaml::Array(list) => list
            .iter()
            .filter_map(|entry| Some((get(entry, "name").and_then(scalar)?, get(entry, "value").and_then(scalar)?)))
            .collect(),
        other => scalar_entries(other),
    }
}

/// The Azure tasks that set up a runtime: the task, its language, the input naming
/// the version.
const AZURE_SET_UP: &[(&str, Language, &str)] = &[
    ("UsePythonVersion", Language::Python, "versionSpec"),
    ("NodeTool", Language::Node, "versionSpec"),
    ("UseNode", Language::Node, "version"),
    ("GoTool", Language::Go, "version"),
    ("JavaToolInstaller", Language::Java, "versionSpec"),
];

/// Azure tasks that set up nothing inference reads: no note for them.
const AZURE_QUIET: &[&str] = &[
    "PublishTestResults",
    "PublishCodeCoverageResults",
    "PublishBuildArtifacts",
    "PublishPipelineArtifact",
    "DownloadPipelineArtifact",
    "Cache",
    "CopyFiles",
    "ArchiveFiles",
    "DownloadBuildArtifacts",
];

/// Marks a macro that Azure leaves as written, while the others expand.
const UNKNOWN_MACRO: &str = "\u{1}";

pub(super) fn azure_jobs(document: &Yaml, notes: &mut Vec<String>) -> Vec<Job> {
    let globals = azure_variables(get(document, "variables").unwrap_or(&Yaml::Null));
    fn add_jobs<'a>(list: &'a Yaml, job_nodes: &mut Vec<(String, &'a Yaml)>) {
        for (index, job) in items(list).into_iter().enumerate() {
            let name = ["job", "deployment"]
                .iter()
                .find_map(|key| get(job, key).and_then(scalar))
                .unwrap_or_else(|| format!("jobs[{index}]"));
            job_nodes.push((name, job));
        }
    }
    let mut job_nodes: Vec<(String, &Yaml)> = Vec::new();
    for stage in items(get(document, "stages").unwrap_or(&Yaml::Null)) {
        add_jobs(get(stage, "jobs").unwrap_or(&Yaml::Null), &mut job_nodes);
    }
    add_jobs(get(document, "jobs").unwrap_or(&Yaml::Null), &mut job_nodes);
    if get(document, "steps").is_some() {
        job_nodes.push(("steps".to_string(), document));
    }
    let mut found = Vec::new();
    for (name, job) in job_nodes {
        if let Some(template) = get(job, "template").and_then(scalar) {
            notes.push(format!("the job template `{template}` is not read"));
            continue;
        }
        // A pool of Windows or macOS images only is not read (tasks run on Linux);
        // a matrix's `$(imageName)` is left to the jobs, read.
        let image =
            get(job, "pool").or_else(|| get(document, "pool")).and_then(|pool| get(pool, "vmImage")).and_then(scalar);
        if let Some(image) = image.filter(|image| {
            let image = image.to_ascii_lowercase();
            image.starts_with("windows") || image.starts_with("macos") || image.starts_with("vs20")
        }) {
            notes.push(format!("job `{name}` runs on {image} only, not read"));
            continue;
        }
        let mut read = Job { name: name.clone(), ..Job::default() };
        read.env = globals.clone();
        if !std::ptr::eq(job, document) {
            read.env.extend(azure_variables(get(job, "variables").unwrap_or(&Yaml::Null)));
        }
        let mut values: Values = read.env.iter().map(|(name, value)| (name.clone(), vec![value.clone()])).collect();
        let strategy = get(job, "strategy").or_else(|| get(document, "strategy"));
        for (_, entry) in entries(strategy.and_then(|strategy| get(strategy, "matrix")).unwrap_or(&Yaml::Null)) {
            for (variable, value) in scalar_entries(entry) {
                let known = values.entry(variable).or_default();
                if !known.contains(&value) {
                    known.push(value);
                }
            }
        }
        let lookup = lookup_in(&values);
        // A macro Azure does not know stays as written, and the shell reads it
        // (`make -j$(nproc)`): marked while expanding, then given back its `$`.
        let macros = |name: &str| Some(lookup(name).unwrap_or_else(|| vec![format!("{UNKNOWN_MACRO}({name})")]));
        let variables = |expression: &str| expression.strip_prefix("variables.").and_then(&lookup);
        let resolve = |text: &str| -> Option<Vec<String>> {
            expand(text, "$(", ")", &macros)?
                .into_iter()
                .map(|text| expand(&text.replace(UNKNOWN_MACRO, "$"), "${{", "}}", &variables))
                .collect::<Option<Vec<Vec<String>>>>()
                .map(|lists| lists.into_iter().flatten().collect())
        };
        if let Some(image) = get(job, "container")
            .and_then(|container| get(container, "image").and_then(scalar).or_else(|| scalar(container)))
        {
            read.images.extend(resolve(&image).unwrap_or_default());
        }
        for step in items(get(job, "steps").unwrap_or(&Yaml::Null)) {
            let env: Vec<(String, String)> = scalar_entries(get(step, "env").unwrap_or(&Yaml::Null));
            let add_script = |text: &str, read: &mut Job| {
                let mut lines = Vec::new();
                for line in shell::logical_lines(text) {
                    match resolve(&line) {
                        Some(resolved) => lines.extend(resolved),
                        None => read.unresolved.push(line),
                    }
                }
                read.steps.push(Step { lines, env: env.clone() });
            };
            if let Some(text) =
                ["script", "bash", "pwsh", "powershell"].iter().find_map(|key| get(step, key).and_then(scalar))
            {
                add_script(&text, &mut read);
                continue;
            }
            if let Some(template) = get(step, "template").and_then(scalar) {
                notes.push(format!("job `{name}` uses the step template `{template}`, which is not read"));
                continue;
            }
            let Some(task) = get(step, "task").and_then(scalar) else { continue };
            let task_name = task.split('@').next().unwrap_or(&task).to_string();
            let inputs = get(step, "inputs").unwrap_or(&Yaml::Null);
            let input = |key: &str| get(inputs, key).and_then(scalar).unwrap_or_default();
            if let Some((_, language, key)) = AZURE_SET_UP.iter().find(|(known, _, _)| *known == task_name) {
                for version in
                    resolve(&input(key)).unwrap_or_default().into_iter().filter(|version| !version.is_empty())
                {
                    read.runtimes.push((*language, version, format!("task `{task}`")));
                }
                continue;
            }
            let command = match task_name.as_str() {
                "Maven" => format!("mvn {} {}", input("options"), input("goals")),
                "Gradle" => format!("./gradlew {}", input("tasks")),
                "Npm" if input("command") == "custom" => format!("npm {}", input("customCommand")),
                "Npm" => format!("npm {}", input("command")),
                "CmdLine" | "Bash" => input("script"),
                known if AZURE_QUIET.contains(&known) => continue,
                _ => {
                    notes.push(format!("job `{name}`'s task `{task}` is not one this reader knows; not read"));
                    continue;
                }
            };
            add_script(command.trim(), &mut read);
        }
        found.push(read);
    }
    found
}

/// The values of each job's parameters: its workflows' `matrix.parameters`, else
/// each parameter's `default`.
fn circleci_parameters(document: &Yaml, job_name: &str, job: &Yaml) -> Values {
    let mut values: Values = Values::new();
    for (_, workflow) in entries(get(document, "workflows").unwrap_or(&Yaml::Null)) {
        for entry in items(get(workflow, "jobs").unwrap_or(&Yaml::Null)) {
            for (name, settings) in entries(entry) {
                if name != job_name {
                    continue;
                }
                for (parameter, value) in
                    entries(get(settings, "matrix").and_then(|matrix| get(matrix, "parameters")).unwrap_or(&Yaml::Null))
                {
                    let known = values.entry(format!("parameters.{parameter}")).or_default();
                    for value in scalars(value) {
                        if !known.contains(&value) {
                            known.push(value);
                        }
                    }
                }
                for (parameter, value) in entries(settings) {
                    if let Some(value) = scalar(value) {
                        values.entry(format!("parameters.{parameter}")).or_default().push(value);
                    }
                }
            }
        }
    }
    for (parameter, declaration) in entries(get(job, "parameters").unwrap_or(&Yaml::Null)) {
        if let Some(default) = get(declaration, "default").and_then(scalar) {
            values.entry(format!("parameters.{parameter}")).or_insert_with(|| vec![default]);
        }
    }
    values
}

pub(super) fn circleci_jobs(document: &Yaml, notes: &mut Vec<String>) -> Vec<Job> {
    let version = get(document, "version").and_then(scalar).unwrap_or_default();
    if !version.starts_with('2') {
        notes.push(format!("CircleCI configuration version `{version}` is not read (only 2 and later)"));
        return Vec::new();
    }
    let executors = get(document, "executors").unwrap_or(&Yaml::Null);
    let commands = get(document, "commands").unwrap_or(&Yaml::Null);
    let mut found = Vec::new();
    for (name, job) in entries(get(document, "jobs").unwrap_or(&Yaml::Null)) {
        let values = circleci_parameters(document, &name, job);
        let resolve = |text: &str| expand(text, "<<", ">>", &lookup_in(&values));
        let executor = get(job, "executor")
            .and_then(|executor| scalar(executor).or_else(|| get(executor, "name").and_then(scalar)))
            .and_then(|executor| get(executors, &executor));
        let mut read = Job { name: name.clone(), ..Job::default() };
        let docker = get(job, "docker").or_else(|| executor.and_then(|executor| get(executor, "docker")));
        for (index, image) in items(docker.unwrap_or(&Yaml::Null)).into_iter().enumerate() {
            let Some(text) = get(image, "image").and_then(scalar) else { continue };
            let Some(resolved) = resolve(&text) else {
                notes.push(format!("job `{name}`'s image `{text}` has a parameter that cannot be resolved; not read"));
                continue;
            };
            read.env.extend(scalar_entries(get(image, "environment").unwrap_or(&Yaml::Null)));
            if index == 0 {
                read.images.extend(resolved);
            } else if let Some(image) = resolved.into_iter().next() {
                read.services.push((super::service_name(&image), image));
            }
        }
        for layer in [executor, Some(job)].into_iter().flatten() {
            read.env.extend(scalar_entries(get(layer, "environment").unwrap_or(&Yaml::Null)));
        }
        let mut steps: Vec<&Yaml> = items(get(job, "steps").unwrap_or(&Yaml::Null));
        let mut expanded = 0;
        while let Some(step) = (!steps.is_empty()).then(|| steps.remove(0)) {
            if let Some(run) = get(step, "run") {
                let command = scalar(run).or_else(|| get(run, "command").and_then(scalar)).unwrap_or_default();
                let env = scalar_entries(get(run, "environment").unwrap_or(&Yaml::Null));
                let mut lines = Vec::new();
                for line in shell::logical_lines(&command) {
                    match resolve(&line) {
                        Some(resolved) => lines.extend(resolved),
                        None => read.unresolved.push(line),
                    }
                }
                read.steps.push(Step { lines, env });
                continue;
            }
            let step_name =
                scalar(step).or_else(|| entries(step).into_iter().next().map(|(key, _)| key)).unwrap_or_default();
            if let Some(defined) = get(commands, &step_name).and_then(|command| get(command, "steps")) {
                // A reusable command: its steps in its place (once per job, no recursion).
                if expanded < 20 {
                    expanded += 1;
                    let mut inner = items(defined);
                    inner.extend(steps);
                    steps = inner;
                }
                continue;
            }
            if step_name.contains('/') {
                notes.push(format!("job `{name}` runs the orb command `{step_name}`, which is not read"));
            }
        }
        found.push(read);
    }
    found
}
