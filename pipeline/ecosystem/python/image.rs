//! Python's environment images and the install step of every container script.
//!
//! The environment: a venv at `/opt/venv` with uv ([`UV_REQUIREMENT`]), the build
//! tools brought up to date without the date cap (`pre_install`), then the project's
//! dependencies installed with `UV_EXCLUDE_NEWER` = the environment commit's date,
//! owned by the unprivileged user, and a `pytest` command wherever pytest is importable
//! ([`PYTEST_COMMAND`]). The extra CA bundle and another PyPI index than PyPI's own
//! (`validate.registries.pypi_index`) are only visible to the build steps that install
//! packages (as `SSL_CERT_FILE`, `PIP_CERT`, `REQUESTS_CA_BUNDLE`, `PIP_INDEX_URL`,
//! `UV_INDEX_URL`), never set in the image's environment.

use super::pretend_version;
use crate::ecosystem::dockerfile::{Dockerfile, owned_by_user};
use crate::sandbox::Owner;
use crate::sandbox::images::{CA_PATH, EnvironmentRequest, ImageSettings, TESTBED_TARBALL, TestbedCopy};
use crate::sandbox::script::shell_quote;

/// uv, pinned so that one spec gives one image.
pub const UV_REQUIREMENT: &str = "uv==0.13.9";
/// The unprivileged user of environment images.
const USER: Owner = Owner::UNPRIVILEGED;

/// A `pytest` command wherever pytest is importable: pytest before 3.0 installs only
/// `py.test`, and every test command says `pytest`.
pub const PYTEST_COMMAND: &str = r#"if [ ! -e /opt/venv/bin/pytest ] && /opt/venv/bin/python -c 'import pytest' 2>/dev/null; then if [ -e /opt/venv/bin/py.test ]; then ln -s py.test /opt/venv/bin/pytest; else printf '#!/bin/sh\nexec /opt/venv/bin/python -m pytest "$@"\n' > /opt/venv/bin/pytest && chmod +x /opt/venv/bin/pytest; fi; fi"#;

/// The shell function `install_repository`: installs `/testbed` into the
/// environment's venv offline (the dependencies are in the image already). Shared
/// by every container script and by release's instance images.
pub const INSTALL_REPOSITORY_FUNCTION: &str = r#"install_repository() {
    if [ -f setup.py ] || { [ -f pyproject.toml ] && grep -qE '^\[(build-system|project)\]' pyproject.toml; }; then
        # setuptools (no other backend named): an editable install that puts /testbed on
        # sys.path (`compat`), not an import hook, as the environment's own install.
        set --
        if ! grep -qsE '^[[:space:]]*build-backend[[:space:]]*=' pyproject.toml \
            || grep -qsE "^[[:space:]]*build-backend[[:space:]]*=[[:space:]]*[\"']setuptools" pyproject.toml; then
            set -- -C editable_mode=compat
        fi
        uv pip install --offline --no-deps --no-build-isolation "$@" -e . && return 0
        # The environment's own editable install points at /testbed too: keep it when the
        # offline reinstall cannot build (e.g. dependencies of the date that today's
        # setuptools cannot build with). Editable installs leave an `__editable__` file,
        # an `.egg-link`, or (flit, hatch) a `.pth` naming /testbed.
        if ls /opt/venv/lib/python3*/site-packages/ 2>/dev/null | grep -qE '^__editable__|\.egg-link$' \
            || grep -qs '^/testbed' /opt/venv/lib/python3*/site-packages/*.pth; then
            echo "swe-harvest: the offline reinstall failed; keeping the environment's editable install of /testbed"
            return 0
        fi
        return 1
    else
        echo "nothing to install: no setup.py or pyproject.toml"
    fi
}"#;

/// The repository comes as a tarball that the install step unpacks and removes again:
/// the image keeps none of it, and the copy of one file costs seconds less than a
/// folder's (see [`TestbedCopy::Tarball`]).
pub const TESTBED_COPY: TestbedCopy = TestbedCopy::Tarball;
/// Where the install step finds the repository's tarball.
const TESTBED_TARBALL_PATH: &str = "/tmp/swe-harvest-testbed.tar";

/// The Dockerfile of an environment image on `base`.
pub fn environment_dockerfile(request: &EnvironmentRequest, base: &str, settings: &ImageSettings) -> String {
    let spec = &request.spec;
    let mut network_env = Vec::new();
    if settings.extra_ca.is_some() {
        for name in ["SSL_CERT_FILE", "PIP_CERT", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"] {
            network_env.push(format!("{name}={CA_PATH}"));
        }
    }
    // Only another index than PyPI's is named: the default keeps the images' content keys.
    let index = &settings.registries.pypi_index;
    if index != crate::sandbox::Registries::PYPI {
        network_env.push(format!("PIP_INDEX_URL={}", shell_quote(index)));
        network_env.push(format!("UV_INDEX_URL={}", shell_quote(index)));
    }
    let network_env =
        if network_env.is_empty() { String::new() } else { format!("export {}; ", network_env.join(" ")) };
    let date = request.date.format("%Y-%m-%dT%H:%M:%SZ");
    let mut dockerfile = Dockerfile::new("an environment image (see pipeline/ecosystem/python/image.rs)", base);
    dockerfile.system_packages(spec, &network_env);
    // The venv is the user's too.
    dockerfile.push(format!(
        "RUN (getent passwd {uid} >/dev/null || useradd --uid {uid} --user-group --no-create-home harvest) \
         && mkdir -p /home/harvest /opt/venv /testbed /swe-harvest/out \
         && chown -R {uid}:{gid} /home/harvest /opt/venv /testbed /swe-harvest",
        uid = USER.uid,
        gid = USER.gid
    ));
    dockerfile.extra_ca(settings);
    dockerfile.push(format!("USER {}:{}", USER.uid, USER.gid));
    dockerfile.push("ENV HOME=/home/harvest VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:$PATH PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1");
    // Every step above the copy is shared from the cache by the environments of the
    // base (`WORKDIR` too: a step of its own for the legacy builder).
    dockerfile.push("WORKDIR /testbed");
    dockerfile
        .push(format!("RUN {network_env}python3 -m venv /opt/venv && python -m pip install --quiet {UV_REQUIREMENT}"));
    dockerfile.push(format!("COPY {} {TESTBED_TARBALL} {TESTBED_TARBALL_PATH}", owned_by_user()));
    let pretend = format!("SETUPTOOLS_SCM_PRETEND_VERSION={}", pretend_version(&request.version));
    // One RUN for every step after the copy: each RUN is a container that the engine
    // makes and commits (about 0.7 s each here, a quarter of a lone task's overhead),
    // and the testbed and uv's cache, removed in a later layer, still weighed in the
    // image. The repository unpacked first; the build tools, without the date cap;
    // then the date.
    let mut steps = vec![format!("tar -xf {TESTBED_TARBALL_PATH} -C / && rm -f {TESTBED_TARBALL_PATH}")];
    steps.extend(spec.pre_install.iter().cloned());
    let mut install = spec.install.clone();
    if !spec.extra_packages.is_empty() {
        let packages: Vec<String> = spec.extra_packages.iter().map(|package| shell_quote(package)).collect();
        install.push(format!("uv pip install {}", packages.join(" ")));
    }
    if !install.is_empty() {
        // Byte-compiled at install, as pip does: a dependency of the task's date compiled
        // at import time can warn (an invalid escape sequence), which a project's
        // `filterwarnings = error` turns into an error before any test is collected.
        steps.push(format!("export UV_EXCLUDE_NEWER={date} UV_COMPILE_BYTECODE=1"));
        steps.extend(install);
    }
    steps.push(PYTEST_COMMAND.to_string());
    steps.push("find /testbed -mindepth 1 -delete && rm -rf /home/harvest/.cache".to_string());
    dockerfile.push(format!("RUN {network_env}export {pretend}; set -e; {}", steps.join("; ")));
    dockerfile.finish(request, &format!(" swe-harvest.exclude-newer={date}"))
}

/// Every container script's setup: the version setuptools-scm is told (there is no
/// `.git` in `/testbed`) and the offline install of the repository.
pub fn script_setup(version: &str) -> String {
    format!("export SETUPTOOLS_SCM_PRETEND_VERSION={}\n{INSTALL_REPOSITORY_FUNCTION}", pretend_version(version))
}

/// The lines SWE-bench's `eval_script` runs first: the venv, and the version.
pub fn harness_setup(version: &str) -> Vec<String> {
    vec![
        "source /opt/venv/bin/activate".to_string(),
        format!("export SETUPTOOLS_SCM_PRETEND_VERSION={}", pretend_version(version)),
    ]
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;
    use crate::model::EnvironmentSpec;
    use crate::sandbox::images::fixtures::{self, settings};
    use crate::sandbox::images::{content_key, tag_for};

    fn request() -> EnvironmentRequest {
        EnvironmentRequest {
            repo: "Acme/Widgets".parse().unwrap(),
            spec: EnvironmentSpec {
                runtime: "3.11".into(),
                pre_install: vec!["uv pip install --upgrade setuptools wheel".into()],
                install: vec!["uv pip install --no-build-isolation -e . pytest".into()],
                extra_packages: vec!["pytest<8".into()],
                test_command: "pytest -rA".into(),
                ..Default::default()
            },
            date: Utc.with_ymd_and_hms(2021, 5, 4, 3, 2, 1).unwrap(),
            version: "2.1".into(),
            ..fixtures::request(EnvironmentSpec::default())
        }
    }

    #[test]
    fn dockerfile_caps_dependencies_at_the_date_but_not_the_build_tools() {
        let text = environment_dockerfile(&request(), "swe-harvest/base:py3.11", &settings(Some(b"CA")));
        assert!(text.contains("FROM swe-harvest/base:py3.11\n"));
        // The build tools come before the date cap, in the same step.
        let step = text.lines().find(|line| line.contains("--upgrade setuptools")).unwrap();
        let (pre, _) = step.split_once("--upgrade setuptools").unwrap();
        assert!(!pre.contains("UV_EXCLUDE_NEWER"), "{step}");
        // The CA is exported inside RUN lines only, never as image ENV.
        let install = fixtures::step_line(&text, "-e . pytest", &["SSL_CERT_FILE"]);
        assert!(install.contains("UV_EXCLUDE_NEWER=2021-05-04T03:02:01Z"), "{install}");
        assert!(install.contains("SETUPTOOLS_SCM_PRETEND_VERSION=2.1.0"), "{install}");
        assert!(install.contains("uv pip install 'pytest<8'"), "extra packages after install: {install}");
        assert!(install.contains("SSL_CERT_FILE=/etc/swe-harvest/ca.crt"), "{install}");
        assert!(text.contains("USER 1000:1000"));
        // pytest before 3.0 has no `pytest` command: one is made after the install, and
        // then the testbed and uv's cache go, all in one step.
        let install_at = install.find("-e . pytest").unwrap();
        let command_at = install.find(PYTEST_COMMAND).unwrap();
        let empty_at = install.find("find /testbed -mindepth 1 -delete").unwrap();
        assert!(install_at < command_at && command_at < empty_at, "{install}");
        assert_eq!(text.matches("RUN ").count(), 3, "the user, uv's venv, then one step: {text}");
        // After the copy, which no other environment shares, a step and the labels only:
        // each line is a step (a container made and committed) of the legacy builder.
        let after_copy: Vec<&str> = text.lines().skip_while(|line| !line.starts_with("COPY --chown")).skip(1).collect();
        assert!(after_copy[0].contains("set -e; tar -xf /tmp/swe-harvest-testbed.tar -C / && rm -f"), "{text}");
        let kinds: Vec<&str> = after_copy.iter().filter_map(|line| line.split_whitespace().next()).collect();
        assert_eq!(kinds, ["RUN", "LABEL"], "{text}");
    }

    #[test]
    fn another_pypi_index_is_named_to_the_install_steps_only() {
        let text = environment_dockerfile(&request(), "base", &settings(None));
        assert!(!text.contains("INDEX_URL"), "PyPI's own index is not named: {text}");
        let mirrored = fixtures::mirrored(|registries| {
            registries.pypi_index = "https://pypi.example.com/simple".into();
            registries.go_proxy = "https://goproxy.example.com".into();
        });
        let text = environment_dockerfile(&request(), "base", &mirrored);
        let install = fixtures::step_line(&text, "UV_EXCLUDE_NEWER", &["INDEX_URL"]);
        assert!(install.contains("UV_INDEX_URL=https://pypi.example.com/simple"), "{install}");
        assert!(install.contains("PIP_INDEX_URL=https://pypi.example.com/simple"), "{install}");
        assert!(!text.contains("goproxy"), "{text}");
    }

    #[test]
    fn content_key_changes_with_every_input_and_tags_are_valid_references() {
        let a = environment_dockerfile(&request(), "base", &settings(None));
        let key = content_key(&a, "sha256:1", None);
        assert_eq!(key, content_key(&a, "sha256:1", None), "stable");
        assert_ne!(key, content_key(&a, "sha256:2", None), "base image id");
        assert_ne!(key, content_key(&a, "sha256:1", Some(b"ca")), "CA bundle");
        let mut other = request();
        other.environment_setup_commit = "b".repeat(40);
        assert_ne!(
            key,
            content_key(&environment_dockerfile(&other, "base", &settings(None)), "sha256:1", None),
            "commit"
        );
        let mut later = request();
        later.date = Utc.with_ymd_and_hms(2022, 1, 1, 0, 0, 0).unwrap();
        assert_ne!(
            key,
            content_key(&environment_dockerfile(&later, "base", &settings(None)), "sha256:1", None),
            "date"
        );
        let tag = tag_for(&request().repo, &key);
        assert_eq!(tag, format!("swe-harvest/env.acme__widgets:{}", &key[..16]));
    }

    /// What `install_repository` asks uv for in a project with `files`.
    fn reinstall_command(files: &[(&str, &str)]) -> String {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            fs_err::write(dir.path().join(path), text).unwrap();
        }
        // uv itself is not run: a function of the same name says what it was given.
        let script = format!("uv() {{ echo \"uv $*\"; }}\n{INSTALL_REPOSITORY_FUNCTION}\ninstall_repository");
        let output = crate::sandbox::script::run_bash_in(dir.path(), &script);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).trim().to_string()
    }

    #[test]
    fn the_run_time_reinstall_asks_setuptools_only_for_a_compat_editable_install() {
        let compat = "uv pip install --offline --no-deps --no-build-isolation -C editable_mode=compat -e .";
        let plain = "uv pip install --offline --no-deps --no-build-isolation -e .";
        assert_eq!(reinstall_command(&[("setup.py", "setup()")]), compat);
        let setuptools = "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = 'setuptools.build_meta'\n";
        assert_eq!(reinstall_command(&[("pyproject.toml", setuptools)]), compat);
        assert_eq!(reinstall_command(&[("pyproject.toml", "[project]\nname = \"x\"\n")]), compat, "PEP 517's default");
        let flit = "[build-system]\nrequires = [\"flit_core\"]\nbuild-backend = \"flit_core.buildapi\"\n";
        assert_eq!(reinstall_command(&[("pyproject.toml", flit)]), plain);
    }
}
