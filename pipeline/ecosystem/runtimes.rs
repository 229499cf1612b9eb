//! The runtime catalogue: every language's runtimes and how their base images are
//! made, declared once, in the language's own folder, as a [`Runtimes`] that its
//! ecosystem returns ([`super::Ecosystem::runtimes`]). Everything else reads it:
//! config validation (which keys `validate.base_images` takes, and the message that
//! lists them), the default `validate.base_images`, each ecosystem's
//! `owns_runtime` and local base image, and `swe-harvest images plan`, which tells
//! `scripts/setup.sh` what to build ([`plan`]). Adding a language is its folder and
//! its line in [`super::ALL`]; nothing here changes.
//!
//! How an image is made is setup.sh's business: one root file system per Debian
//! suite ([`DebianSuite`], with [`SUITE_PACKAGES`]), and on it one layer per image
//! that installs the image's packages from the suite; or, where a language names an
//! [`Upstream`] image and its registry answers, that image plus its packages. Every
//! image is checked by running its [`Check`] without network.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

/// The repository of the base images that scripts/setup.sh makes.
pub const BASE_REPO: &str = "swe-harvest/base";

/// What every base image holds, whatever its language, installed once per suite in
/// the suite's root file system: git, patch and CA certificates (the sandbox checks
/// repositories out and applies patches), and a C and C++ toolchain, which most
/// languages need to build something (an sdist, cgo, a `-sys` crate, a node-gyp
/// addon) and which is then downloaded and unpacked once per suite, not once per image.
pub const SUITE_PACKAGES: &[&str] =
    &["ca-certificates", "git", "patch", "gcc", "g++", "make", "libc6-dev", "pkg-config"];

crate::spelled::spelled_enum! {
    /// A Debian suite that base images are made from.
    ///
    /// Its spelling is the suite's name on a Debian mirror (`dists/<name>`) and in `/etc/os-release`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
    #[serde(rename_all = "lowercase")]
    pub enum DebianSuite {
        /// Debian 11.
        Bullseye => "bullseye",
        /// Debian 12.
        Bookworm => "bookworm",
        /// Debian 13.
        Trixie => "trixie",
        /// Debian testing: its packages move with it.
        Forky => "forky",
    }
}

impl DebianSuite {
    /// Time zone data that minbase leaves out: from trixie on, the old zone names
    /// (`US/Eastern`, `Asia/Calcutta`, `EST5EDT`), which tests and libraries still use,
    /// are in `tzdata-legacy`; before it `tzdata` holds them. Installed in each image's
    /// layer, so that the suites' root file systems stay as they are.
    pub fn time_zone_packages(self) -> &'static [&'static str] {
        match self {
            DebianSuite::Bullseye | DebianSuite::Bookworm => &[],
            DebianSuite::Trixie | DebianSuite::Forky => &["tzdata-legacy"],
        }
    }
}

/// How the version in a runtime key is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionForm {
    /// `20` (`node20`, `jdk17`, `gcc12`).
    Major,
    /// `1.24` (`go1.24`, `3.11`).
    MajorMinor,
}

impl VersionForm {
    fn matches(self, version: &str) -> bool {
        let number = |part: &str| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit());
        match self {
            VersionForm::Major => number(version),
            VersionForm::MajorMinor => {
                version.split_once('.').is_some_and(|(major, minor)| number(major) && number(minor))
            }
        }
    }
}

/// How an image is checked: `command` runs in it through `sh -c`, without network,
/// and must succeed with output that starts with `expect`. `{version}` in either
/// stands for the runtime's version.
#[derive(Debug, Clone, Copy)]
pub struct Check {
    pub command: &'static str,
    pub expect: &'static str,
}

/// An image of another registry that holds the runtime (`python:{version}-slim`),
/// taken where that registry answers, with `packages` added from its own apt.
#[derive(Debug, Clone, Copy)]
pub struct Upstream {
    pub image: &'static str,
    pub packages: &'static [&'static str],
}

/// One runtime of a language and the suite whose packages provide it.
#[derive(Debug, Clone, Copy)]
pub struct BaseImage {
    /// The version, as the key and tag carry it (`3.11`, `1.24`, `17`).
    pub version: &'static str,
    pub suite: DebianSuite,
    /// Whether scripts/setup.sh makes it for its language without being asked by tag.
    pub by_default: bool,
}

/// A language's runtimes: the keys of `validate.base_images` it owns and the base
/// images scripts/setup.sh makes for them.
#[derive(Debug)]
pub struct Runtimes {
    /// The language as `SWE_HARVEST_LANGUAGES` and `images plan --language` name it.
    pub language: &'static str,
    /// Other names of it there (`javascript` and `typescript` for `node`).
    pub aliases: &'static [&'static str],
    /// A runtime key is this prefix and a version of `version_form` (`go` + `1.24`;
    /// Python's keys are bare versions).
    pub key_prefix: &'static str,
    pub version_form: VersionForm,
    /// An image's tag is this prefix and the key (`py` + `3.11`; empty for most).
    pub tag_prefix: &'static str,
    /// The Debian packages of the image's layer on its suite (`{version}` stands for
    /// the runtime's version); those of [`SUITE_PACKAGES`] may be named too.
    pub packages: &'static [&'static str],
    /// The image's default command.
    pub command: &'static str,
    pub check: Check,
    /// The runtimes with an image, oldest first.
    pub images: &'static [BaseImage],
    /// Where another registry may provide the image faster, or provide a runtime that
    /// no suite has (asked for by tag).
    pub upstream: Option<Upstream>,
}

impl Runtimes {
    /// Whether `key` is one of this language's runtime keys (with an image or not).
    pub fn owns(&self, key: &str) -> bool {
        key.strip_prefix(self.key_prefix).is_some_and(|version| self.version_form.matches(version))
    }

    /// The key of a runtime version (`go` + `1.24`).
    pub fn key(&self, version: &str) -> String {
        format!("{}{version}", self.key_prefix)
    }

    /// The tag of a runtime key's image (`3.11` -> `py3.11`).
    pub fn tag(&self, key: &str) -> String {
        format!("{}{key}", self.tag_prefix)
    }

    /// The newest runtime's key, to show the form of the keys.
    pub fn example_key(&self) -> String {
        self.images.last().map_or_else(|| self.key("1"), |image| self.key(image.version))
    }

    /// The version in one of this language's image tags.
    fn version_of_tag<'t>(&self, tag: &'t str) -> Option<&'t str> {
        let key = tag.strip_prefix(self.tag_prefix)?;
        self.owns(key).then(|| &key[self.key_prefix.len()..])
    }

    fn names(&self) -> impl Iterator<Item = &'static str> {
        std::iter::once(self.language).chain(self.aliases.iter().copied())
    }
}

/// One [`Runtimes`] per language, in the order of [`super::ALL`] (ecosystems that
/// share a language's runtimes return the same one).
pub fn catalogue() -> Vec<&'static Runtimes> {
    let mut seen = BTreeSet::new();
    super::ALL.iter().map(|ecosystem| ecosystem.runtimes()).filter(|runtimes| seen.insert(runtimes.language)).collect()
}

/// Whether `key` is a runtime key of some language (`3.11`, `go1.24`, `jdk17`).
pub fn is_runtime_key(key: &str) -> bool {
    catalogue().iter().any(|runtimes| runtimes.owns(key))
}

/// The forms of runtime keys, for messages: "`3.14` (python), `go1.24` (go), ...".
pub fn key_forms() -> String {
    catalogue()
        .iter()
        .map(|runtimes| format!("`{}` ({})", runtimes.example_key(), runtimes.language))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The default `validate.base_images`: every runtime of the catalogue with the image
/// scripts/setup.sh makes for it.
pub fn default_base_images() -> BTreeMap<String, String> {
    catalogue()
        .iter()
        .flat_map(|runtimes| {
            runtimes.images.iter().map(|image| {
                let key = runtimes.key(image.version);
                let local = format!("{BASE_REPO}:{}", runtimes.tag(&key));
                (key, local)
            })
        })
        .collect()
}

/// What scripts/setup.sh builds: the root file systems of the suites, then the images.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    pub suites: Vec<PlannedSuite>,
    pub images: Vec<PlannedImage>,
}

/// One Debian suite's root file system: minbase and [`SUITE_PACKAGES`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedSuite {
    pub suite: DebianSuite,
    /// Its image's tag.
    pub tag: String,
    pub packages: Vec<String>,
    pub check: PlannedCheck,
}

/// One base image.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedImage {
    pub tag: String,
    /// Its key in `validate.base_images`.
    pub runtime: String,
    pub language: &'static str,
    /// The suite it is layered on; none when only [`PlannedImage::upstream`] has it.
    pub suite: Option<DebianSuite>,
    pub packages: Vec<String>,
    pub command: &'static str,
    pub check: PlannedCheck,
    pub upstream: Option<PlannedUpstream>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedCheck {
    pub command: String,
    pub expect: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedUpstream {
    pub image: String,
    pub packages: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("unknown language `{name}`; the languages are {known}")]
    UnknownLanguage { name: String, known: String },
    #[error("unknown base image `{tag}`; the images are {known}")]
    UnknownImage { tag: String, known: String },
}

/// The plan for `languages` (the images each makes by default) and `tags` (images by
/// tag, those not made by default too, and an upstream-only runtime such as `py3.8`);
/// with neither, every image of the catalogue. In catalogue order, without repeats.
pub fn plan(languages: &[String], tags: &[String]) -> Result<Plan, PlanError> {
    let catalogue = catalogue();
    let mut images: Vec<PlannedImage> = Vec::new();
    let mut add = |image: PlannedImage| {
        if !images.iter().any(|planned| planned.tag == image.tag) {
            images.push(image);
        }
    };
    let everything = languages.is_empty() && tags.is_empty();
    for runtimes in &catalogue {
        let asked = everything || languages.iter().any(|name| runtimes.names().any(|known| known == name));
        for image in runtimes.images.iter().filter(|image| everything || (asked && image.by_default)) {
            add(planned(runtimes, image.version, Some(image.suite)));
        }
    }
    for name in languages {
        if !catalogue.iter().any(|runtimes| runtimes.names().any(|known| known == name)) {
            let known: Vec<&str> = catalogue.iter().flat_map(|runtimes| runtimes.names()).collect();
            return Err(PlanError::UnknownLanguage { name: name.clone(), known: known.join(", ") });
        }
    }
    for tag in tags {
        let found = catalogue.iter().find_map(|runtimes| {
            let version = runtimes.version_of_tag(tag)?;
            match runtimes.images.iter().find(|image| image.version == version) {
                Some(image) => Some(planned(runtimes, version, Some(image.suite))),
                None => runtimes.upstream.map(|_| planned(runtimes, version, None)),
            }
        });
        let Some(image) = found else {
            let mut known: Vec<String> = catalogue
                .iter()
                .flat_map(|runtimes| runtimes.images.iter().map(|image| runtimes.tag(&runtimes.key(image.version))))
                .collect();
            known.extend(catalogue.iter().filter_map(|runtimes| Some((runtimes, runtimes.upstream?))).map(
                |(runtimes, upstream)| {
                    let image = upstream.image.replace("{version}", "X.Y");
                    format!("another {} from {image} where its registry answers", runtimes.tag(&runtimes.key("X.Y")))
                },
            ));
            return Err(PlanError::UnknownImage { tag: tag.clone(), known: known.join(", ") });
        };
        add(image);
    }
    let suites: BTreeSet<DebianSuite> = images.iter().filter_map(|image| image.suite).collect();
    Ok(Plan { suites: suites.into_iter().map(planned_suite).collect(), images })
}

/// The tag of a suite's root file system image (`debian-bookworm`).
pub fn suite_tag(suite: DebianSuite) -> String {
    format!("debian-{}", suite.as_str())
}

fn planned_suite(suite: DebianSuite) -> PlannedSuite {
    PlannedSuite {
        suite,
        tag: suite_tag(suite),
        packages: SUITE_PACKAGES.iter().map(|package| package.to_string()).collect(),
        check: PlannedCheck {
            command: r#". /etc/os-release && echo "$VERSION_CODENAME" && git --version && gcc -dumpversion"#.into(),
            expect: suite.as_str().into(),
        },
    }
}

fn planned(runtimes: &Runtimes, version: &str, suite: Option<DebianSuite>) -> PlannedImage {
    let fill = |text: &str| text.replace("{version}", version);
    let key = runtimes.key(version);
    PlannedImage {
        tag: runtimes.tag(&key),
        runtime: key,
        language: runtimes.language,
        suite,
        packages: runtimes
            .packages
            .iter()
            .map(|package| fill(package))
            .chain(suite.iter().flat_map(|suite| suite.time_zone_packages()).map(|package| package.to_string()))
            .collect(),
        command: runtimes.command,
        check: PlannedCheck { command: fill(runtimes.check.command), expect: fill(runtimes.check.expect) },
        upstream: runtimes.upstream.map(|upstream| PlannedUpstream {
            image: fill(upstream.image),
            packages: upstream.packages.iter().map(|package| fill(package)).collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|item| item.to_string()).collect()
    }

    #[test]
    fn every_catalogue_runtime_has_a_default_image_and_a_key_that_config_accepts() {
        let defaults = default_base_images();
        let mut count = 0;
        for runtimes in catalogue() {
            for image in runtimes.images {
                let key = runtimes.key(image.version);
                assert!(is_runtime_key(&key), "{key}");
                assert_eq!(defaults[&key], format!("swe-harvest/base:{}", runtimes.tag(&key)));
                // One owner per key: each ecosystem chooses only among its own.
                let owners: Vec<&str> =
                    catalogue().iter().filter(|other| other.owns(&key)).map(|other| other.language).collect();
                assert_eq!(owners, vec![runtimes.language], "{key}");
                count += 1;
            }
        }
        assert_eq!(defaults.len(), count, "nothing in the defaults that the catalogue lacks");
        assert!(defaults.contains_key("3.11") && defaults.contains_key("go1.24") && defaults.contains_key("gcc14"));
        for bad in ["3", "py3.11", "go1", "node", "jdk17.1", "gcc", "cobol1"] {
            assert!(!is_runtime_key(bad), "{bad}");
        }
        // A runtime nobody builds is still a key (an image of one's own).
        assert!(is_runtime_key("3.8") && is_runtime_key("go1.20") && is_runtime_key("node22"));
    }

    #[test]
    fn the_plan_without_filters_lists_exactly_the_catalogue_images_and_their_suites() {
        let plan = plan(&[], &[]).unwrap();
        let tags: BTreeSet<String> = plan.images.iter().map(|image| image.tag.clone()).collect();
        let expected: BTreeSet<String> =
            default_base_images().values().map(|image| image.replace("swe-harvest/base:", "")).collect();
        assert_eq!(tags, expected);
        assert_eq!(tags.len(), plan.images.len(), "no image twice");
        let suites: BTreeSet<DebianSuite> = plan.images.iter().filter_map(|image| image.suite).collect();
        assert_eq!(plan.suites.iter().map(|suite| suite.suite).collect::<BTreeSet<_>>(), suites);
        assert!(plan.images.iter().all(|image| image.suite.is_some()), "every catalogue image has its suite");
    }

    #[test]
    fn a_language_plans_its_default_images_and_a_tag_adds_one() {
        let plan = plan(&strings(&["python", "javascript"]), &strings(&["gcc14", "py3.8"])).unwrap();
        let tags: Vec<&str> = plan.images.iter().map(|image| image.tag.as_str()).collect();
        assert_eq!(tags, ["py3.9", "py3.11", "py3.13", "py3.14", "node18", "node20", "gcc14", "py3.8"]);
        let suites: Vec<&str> = plan.suites.iter().map(|suite| suite.suite.as_str()).collect();
        assert_eq!(suites, ["bullseye", "bookworm", "trixie", "forky"]);

        let py311 = &plan.images[1];
        assert_eq!((py311.runtime.as_str(), py311.suite), ("3.11", Some(DebianSuite::Bookworm)));
        assert!(py311.packages.contains(&"python3-dev".to_string()), "{:?}", py311.packages);
        assert_eq!(py311.check.expect, "Python 3.11.");
        assert_eq!(py311.upstream.as_ref().unwrap().image, "python:3.11-slim");
        // A runtime of no suite comes only from its upstream image.
        let py38 = &plan.images[7];
        assert_eq!((py38.suite, py38.check.expect.as_str()), (None, "Python 3.8."));

        let java = plan_of("java");
        assert_eq!(java.images[1].packages[0], "openjdk-17-jdk-headless");
        assert_eq!(java.images[1].check.expect, "javac 17.");
        assert!(java.images.iter().all(|image| image.upstream.is_none()), "Java's images are Debian's only");
    }

    fn plan_of(language: &str) -> Plan {
        plan(&strings(&[language]), &[]).unwrap()
    }

    #[test]
    fn unknown_languages_and_images_are_errors_that_list_the_known_ones() {
        let error = plan(&strings(&["cobol"]), &[]).unwrap_err().to_string();
        assert!(error.contains("`cobol`") && error.contains("python") && error.contains("typescript"), "{error}");
        let error = plan(&[], &strings(&["go1.20"])).unwrap_err().to_string();
        assert!(
            error.contains("`go1.20`") && error.contains("go1.24") && error.contains("pyX.Y from python:X.Y-slim"),
            "{error}"
        );
        // Java has no upstream image: a JDK no suite has is unknown.
        assert!(plan(&[], &strings(&["jdk8"])).is_err());
    }

    #[test]
    fn key_forms_name_every_language() {
        let forms = key_forms();
        for runtimes in catalogue() {
            assert!(forms.contains(&format!("({})", runtimes.language)), "{forms}");
        }
        assert!(forms.contains("`go1.27` (go)"), "the newest key: {forms}");
    }
}
