//! `review`: the human side of curation. A local web server (on 127.0.0.1 unless told
//! otherwise) serves one page, embedded in the binary, on which a maintainer reads a
//! release's tasks (or the store's validated ones) and keeps, rejects or marks them
//! as needing work, with the keyboard.
//!
//! What it owns: loading the tasks to show ([`source`]), the HTTP API and the page
//! ([`server`], `page/`), rendering issue text safely ([`markdown`]) and reading the
//! quality screen's record of a task ([`quality`]). Decisions are written through
//! [`crate::store::reviews`], each in its own transaction taken under the data dir's
//! lock for that moment only: while a stage owns the data dir the page is read-only and
//! says why, and becomes writable again when the stage ends. Two pages on one data
//! dir (one server or two) never lose a decision: the last write on a task wins, and
//! each page sees, through the revisions, what was decided elsewhere.
//!
//! It does not change tasks or releases; `release --reviewed-only` /
//! `--exclude-rejected` read the decisions.

pub mod markdown;
pub mod quality;
mod server;
pub mod source;

use std::net::{IpAddr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};

use crate::lock::{DataDirLock, LockError};
use crate::store::{Store, StoreError};

pub use server::Session;

/// The port tried first when none is asked for; when it is taken, the system picks one.
pub const DEFAULT_PORT: u16 = 8470;

/// Which tasks the page shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewSource {
    /// A release of the data dir: `releases/<name>/<version>/tasks.jsonl`.
    Release { name: String, version: String },
    /// Every validated task in the store.
    Validated,
}

impl ReviewSource {
    /// `NAME/VERSION` of a release; an error that says what is expected otherwise.
    pub fn release(text: &str) -> Result<ReviewSource, ReviewError> {
        let bad = || ReviewError::BadReleaseName { given: text.to_string() };
        let (name, version) = text.split_once('/').ok_or_else(bad)?;
        // The release's own rule (`release` checks the same when it writes one).
        crate::model::ids::check_id("release name", name).map_err(|_| bad())?;
        crate::model::ids::check_id("release version", version).map_err(|_| bad())?;
        Ok(ReviewSource::Release { name: name.to_string(), version: version.to_string() })
    }

    /// For people: `release demo/1`, `the store's validated tasks`.
    pub fn describe(&self) -> String {
        match self {
            ReviewSource::Release { name, version } => format!("release {name}/{version}"),
            ReviewSource::Validated => "the store's validated tasks".to_string(),
        }
    }
}

/// Everything a review session is started with.
#[derive(Debug, Clone)]
pub struct ReviewSettings {
    pub data_dir: PathBuf,
    pub source: ReviewSource,
    /// The address to listen on: loopback unless `--listen` says otherwise.
    pub listen: IpAddr,
    /// `--port`: exactly this port, or an error when it is taken.
    pub port: Option<u16>,
    pub reviewer: String,
    /// This process's command line, written into the lock file while a decision is written.
    pub command_line: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    #[error("`{given}` does not name a release: expected NAME/VERSION, for example `demo/1`")]
    BadReleaseName { given: String },
    #[error("there is no release `{release}` in this data dir{}", list_known(known))]
    UnknownRelease { release: String, known: Vec<String> },
    #[error("the release `{release}` holds no task (`{}` is empty)", path.display())]
    EmptyRelease { release: String, path: PathBuf },
    #[error("the store `{}` holds no validated task to review", store.display())]
    NoValidatedTasks { store: PathBuf },
    #[error("failed to read the release")]
    Release(#[source] crate::dataset::DatasetError),
    #[error("the release holds a row with a bad instance id")]
    BadInstanceId(#[source] crate::model::ids::IdError),
    #[error("port {port} on {address} is in use by another program")]
    PortInUse { address: IpAddr, port: u16 },
    #[error("failed to listen on {address}")]
    Listen {
        address: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("the review server stopped with an error")]
    Serve(#[source] std::io::Error),
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn list_known(known: &[String]) -> String {
    if known.is_empty() { "; it has no release yet".to_string() } else { format!("; it has {}", known.join(", ")) }
}

impl ReviewError {
    /// Whether the person at the terminal asked for something that cannot be (exit 2).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            ReviewError::BadReleaseName { .. }
                | ReviewError::UnknownRelease { .. }
                | ReviewError::EmptyRelease { .. }
                | ReviewError::NoValidatedTasks { .. }
                | ReviewError::PortInUse { .. }
        )
    }

    pub fn hint(&self) -> Option<String> {
        match self {
            ReviewError::BadReleaseName { .. } | ReviewError::UnknownRelease { .. } => Some(
                "pass `--release NAME/VERSION` of a release made by `swe-harvest release`, or `--stage validated` \
                 for every validated task in the store"
                    .to_string(),
            ),
            ReviewError::EmptyRelease { .. } => {
                Some("review another release, or `--stage validated` for the store's tasks".to_string())
            }
            ReviewError::NoValidatedTasks { .. } => {
                Some("run `swe-harvest validate` first, or pass the right `--data-dir`".to_string())
            }
            ReviewError::PortInUse { .. } => {
                Some("choose another with `--port N`, or leave `--port` out to take a free one".to_string())
            }
            _ => None,
        }
    }
}

/// Prepares a session: loads the tasks, reads whether the data dir is free to write,
/// and binds the address (so that a taken port is an error before anything is printed).
pub fn open(store: Store, settings: ReviewSettings) -> Result<Session, ReviewError> {
    let tasks = source::load(&store, &settings.data_dir, &settings.source)?;
    let listener = bind(settings.listen, settings.port)?;
    Session::new(store, settings, tasks, listener)
}

fn bind(address: IpAddr, port: Option<u16>) -> Result<TcpListener, ReviewError> {
    let attempt = |port: u16| {
        let socket = SocketAddr::new(address, port);
        TcpListener::bind(socket).map_err(|source| match source.kind() {
            std::io::ErrorKind::AddrInUse => ReviewError::PortInUse { address, port },
            _ => ReviewError::Listen { address: socket, source },
        })
    };
    match port {
        Some(port) => attempt(port),
        None => match attempt(DEFAULT_PORT) {
            Err(ReviewError::PortInUse { .. }) => attempt(0),
            other => other,
        },
    }
}

/// Why the page cannot write now, if it cannot: another process owns the data dir.
pub(crate) fn read_only_reason(data_dir: &Path) -> Option<String> {
    match DataDirLock::check_free(data_dir) {
        Ok(()) => None,
        Err(error @ LockError::Held { .. }) => Some(format!("read-only: {error}")),
        Err(error) => Some(format!("read-only: {}", crate::error_chain(&error))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_release_is_named_name_slash_version_and_nothing_else() {
        assert_eq!(
            ReviewSource::release("demo/1").unwrap(),
            ReviewSource::Release { name: "demo".into(), version: "1".into() }
        );
        for bad in ["demo", "demo/", "/1", "../x/1", "demo/1/2", "de mo/1"] {
            let error = ReviewSource::release(bad).unwrap_err();
            assert!(error.to_string().contains("NAME/VERSION"), "{bad}: {error}");
        }
    }

    #[test]
    fn a_taken_port_is_named_and_without_a_port_a_free_one_is_taken() {
        let taken = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        let error = bind(IpAddr::from([127, 0, 0, 1]), Some(port)).unwrap_err();
        assert!(error.to_string().contains(&format!("port {port} on 127.0.0.1 is in use")), "{error}");
        assert!(error.is_usage());
        let _default = TcpListener::bind(("127.0.0.1", DEFAULT_PORT));
        let free = bind(IpAddr::from([127, 0, 0, 1]), None).expect("a free port when none is asked for");
        assert_ne!(free.local_addr().unwrap().port(), port);
    }
}
