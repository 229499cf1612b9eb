//! The package registries that environment image builds reach, one setting per
//! registry (`validate.registries` in the config): their defaults, the hosts the
//! public ones send their clients on to, and the checks of a config's values. The
//! build network's allowlist ([`super::egress::Allowlist`]) is made of these; the
//! languages' images name them to their package managers.

use serde::{Deserialize, Serialize};

use crate::settings::{ConfigError, invalid};

/// The package registries that environment image builds reach (and nothing else:
/// test runs have no network), one setting per registry. The defaults are the public
/// registries; a mirror or a proxy of one is set here. [`Registries::all`] lists them
/// (an egress allowlist is made of these).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Registries {
    /// PyPI's simple index: pip and uv in Python builds (`PIP_INDEX_URL`, `UV_INDEX_URL`).
    pub pypi_index: String,
    /// The npm registry: npm, Yarn and pnpm in Node builds (`npm_config_registry`,
    /// `YARN_REGISTRY`, `YARN_NPM_REGISTRY_SERVER`).
    pub npm_registry: String,
    /// The Go module proxy: `go mod download` and `go get` in Go builds (`GOPROXY`).
    /// Go's own default adds `,direct` (modules the proxy lacks come from their
    /// version control host); that host is then reached too.
    pub go_proxy: String,
    /// The Maven repository that replaces Maven Central in Maven builds (a mirror of
    /// `central` in `~/.m2/settings.xml`).
    pub maven_repository: String,
    /// The crates index: cargo in Rust builds (a source replacing crates.io; the
    /// `sparse+` protocol).
    pub crates_index: String,
    /// The Debian archive that apt reaches in builds that add system packages: the
    /// mirror the base images were made from (`scripts/setup.sh`,
    /// `SWE_HARVEST_DEBIAN_MIRROR`). Plain HTTP by default, as Debian serves it: apt
    /// checks every file against the archive's signed `Release`.
    pub debian_archive: String,
    /// More destinations that builds may reach (`https://host[:port]` for a tunnel to
    /// the host, `http://host[:port]` for plain requests to it): a registry that a
    /// project's own files name (a Yarn or Gradle registry, a POM repository). Every
    /// destination not listed here or above is refused by the build proxy.
    pub allow: Vec<String>,
}

impl Default for Registries {
    fn default() -> Self {
        Registries {
            pypi_index: Registries::PYPI.into(),
            npm_registry: Registries::NPM.into(),
            go_proxy: Registries::GO.into(),
            maven_repository: Registries::MAVEN.into(),
            crates_index: Registries::CRATES.into(),
            debian_archive: Registries::DEBIAN.into(),
            allow: Vec::new(),
        }
    }
}

impl Registries {
    pub const PYPI: &str = "https://pypi.org/simple";
    pub const NPM: &str = "https://registry.npmjs.org/";
    pub const GO: &str = "https://proxy.golang.org";
    pub const MAVEN: &str = "https://repo.maven.apache.org/maven2";
    pub const CRATES: &str = "sparse+https://index.crates.io/";
    pub const DEBIAN: &str = "http://deb.debian.org/debian";

    /// Every registry as (setting, language of the builds that reach it, URL).
    pub fn all(&self) -> [(&'static str, &'static str, &str); 6] {
        [
            ("pypi_index", "python", &self.pypi_index),
            ("npm_registry", "javascript/typescript", &self.npm_registry),
            ("go_proxy", "go", &self.go_proxy),
            ("maven_repository", "java", &self.maven_repository),
            ("crates_index", "rust", &self.crates_index),
            ("debian_archive", "system packages", &self.debian_archive),
        ]
    }

    /// The hosts that a public registry sends its clients on to, as (setting, URL):
    /// PyPI's files, crates.io's downloads, the Go checksum database. A mirror set in
    /// place of the public registry serves these itself (or its hosts go in `allow`).
    pub fn companions(&self) -> Vec<(&'static str, &'static str)> {
        let mut companions = Vec::new();
        if self.pypi_index == Registries::PYPI {
            companions.push(("pypi_index", "https://files.pythonhosted.org"));
        }
        if self.crates_index == Registries::CRATES {
            companions.push(("crates_index", "https://static.crates.io"));
        }
        if self.go_proxy == Registries::GO {
            companions.push(("go_proxy", "https://sum.golang.org"));
        }
        companions
    }
}

impl Registries {
    /// Each registry's URL and each of `allow` is an http(s) URL ([`check_url`]); `at`
    /// is the key of this table (`validate.registries`).
    pub fn check_urls(&self, origin: &str, at: &str) -> Result<(), ConfigError> {
        for (key, _, url) in self.all() {
            check_url(origin, &format!("{at}.{key}"), url)?;
        }
        for url in &self.allow {
            check_url(origin, &format!("{at}.allow"), url)?;
        }
        Ok(())
    }

    /// An allowlist can be made of these registries (each URL names a host); the error
    /// is the key `at`'s.
    pub fn check_allowlist(&self, origin: &str, at: &str) -> Result<(), ConfigError> {
        super::egress::Allowlist::of(self).map(drop).map_err(|message| invalid(origin, at, message))
    }
}

/// A registry's URL: http(s) (cargo's `sparse+https://` too), nothing that a shell or
/// an XML file would read differently.
pub fn check_url(origin: &str, key: &str, url: &str) -> Result<(), ConfigError> {
    let scheme_ok = ["http://", "https://", "sparse+http://", "sparse+https://"].iter().any(|s| url.starts_with(s));
    if !scheme_ok || url.chars().any(|c| c.is_whitespace() || c.is_control() || "<>&\"'`$\\".contains(c)) {
        return Err(invalid(
            origin,
            key,
            format!("`{url}` is not an http(s) URL (a crates index may start with `sparse+`)"),
        ));
    }
    Ok(())
}
