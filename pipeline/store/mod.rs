//! The embedded state store: one SQLite database at `<data-dir>/state.db` that every
//! stage reads its inputs from and writes its outputs to.
//!
//! Why SQLite: a stage's unit of work (a page of PRs, one candidate, one validation
//! run) is written in one transaction, so a process killed at any instant leaves
//! either all of that unit or none of it, and the next run resumes from what is
//! there. WAL mode lets `status` read while a stage writes.
//!
//! This module owns the connection, the schema and its migrations; the submodules
//! hold the queries for one concern each. It does not know about GitHub, git or
//! Docker.

pub mod candidates;
pub mod coverage;
pub mod crawl;
pub mod discover;
pub mod extract;
mod funnel;
mod migrations;
pub mod probe;
pub mod raw;
pub mod reviews;
pub mod screen;
pub mod validation;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};

pub use funnel::{FunnelReport, RepositoryFunnel, StageFunnel};
pub use migrations::SCHEMA_VERSION;

/// The file name of the store inside the data dir.
pub const STORE_FILE: &str = "state.db";

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("failed to open the state store `{path}`")]
    Open {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("failed to create the data dir `{path}`")]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the state store `{path}` has schema version {found}, newer than this swe-harvest supports ({supported}); \
         upgrade swe-harvest or use another --data-dir"
    )]
    TooNew { path: PathBuf, found: u32, supported: u32 },
    #[error("failed to migrate the state store `{path}` to schema version {version}")]
    Migrate {
        path: PathBuf,
        version: u32,
        #[source]
        source: rusqlite::Error,
    },
    #[error("state store query failed")]
    Sqlite(#[source] rusqlite::Error),
    #[error(
        "the state store cannot be written: the data dir is read-only for this user; check its permissions, \
         or pass another --data-dir"
    )]
    ReadOnly(#[source] rusqlite::Error),
    #[error(
        "the state store could not be written: the disk that holds the data dir is full (or failing); free some \
         space and run the same command again (what was stored before stays)"
    )]
    DiskFull(#[source] rusqlite::Error),
    #[error("a stored `{kind}` row could not be decoded (key `{key}`); the store may be from an incompatible version")]
    Decode {
        kind: &'static str,
        key: String,
        #[source]
        source: serde_json::Error,
    },
}

/// SQLite's own words ("attempt to write a readonly database", "disk I/O error") do
/// not say what to do: the two that a user can fix get a message of their own.
impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> StoreError {
        use rusqlite::ErrorCode::{DiskFull, ReadOnly, SystemIoFailure};
        match error.sqlite_error_code() {
            Some(ReadOnly) => StoreError::ReadOnly(error),
            Some(DiskFull | SystemIoFailure) => StoreError::DiskFull(error),
            _ => StoreError::Sqlite(error),
        }
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// An open state store.
pub struct Store {
    connection: Connection,
    path: PathBuf,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

impl Store {
    /// Opens (creating if needed) the store of a data dir and brings its schema up to date.
    pub fn open_in(data_dir: &Path) -> Result<Store> {
        fs_err::create_dir_all(data_dir)
            .map_err(|source| StoreError::CreateDir { path: data_dir.to_path_buf(), source })?;
        Store::open(&data_dir.join(STORE_FILE))
    }

    /// Opens (creating if needed) the store at `path` and applies every migration.
    pub fn open(path: &Path) -> Result<Store> {
        Store::open_at_version(path, SCHEMA_VERSION)
    }

    /// Opens the store and migrates it only up to `version`. For tests of migrations
    /// from older stores; the pipeline always uses [`Store::open`].
    #[doc(hidden)]
    pub fn open_at_version(path: &Path, version: u32) -> Result<Store> {
        let open_error = |source| StoreError::Open { path: path.to_path_buf(), source };
        let connection = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(open_error)?;
        // First the busy timeout: migrating waits for another process doing the same
        // instead of failing with SQLITE_BUSY.
        connection.busy_timeout(BUSY_TIMEOUT).map_err(open_error)?;
        // WAL: readers (status) never block the writer; synchronous=NORMAL is durable
        // across process crashes in WAL mode, which is the failure we design for.
        enable_wal(&connection).map_err(open_error)?;
        connection.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;").map_err(open_error)?;
        let mut store = Store { connection, path: path.to_path_buf() };
        migrations::migrate(&mut store.connection, &store.path, version)?;
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version the store is at.
    pub fn schema_version(&self) -> Result<u32> {
        Ok(self.connection.query_row("PRAGMA user_version", [], |row| row.get(0))?)
    }

    /// Runs `work` in one write transaction: committed when it returns `Ok`, rolled
    /// back when it returns `Err` (or when the process dies before the commit).
    pub fn transaction<T, E>(&mut self, work: impl FnOnce(&Transaction<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        // IMMEDIATE takes the write lock up front, so two writers queue instead of
        // failing halfway with SQLITE_BUSY.
        let transaction =
            self.connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(StoreError::from)?;
        let value = work(&transaction)?;
        transaction.commit().map_err(StoreError::from)?;
        Ok(value)
    }

    /// Read access for queries that need no transaction.
    pub fn connection(&self) -> &Connection {
        &self.connection
    }

    /// The funnel: per repository and stage, how many items entered, passed and were
    /// dropped, and why.
    pub fn funnel(&self, repos: &[crate::model::RepoSlug]) -> Result<FunnelReport> {
        funnel::report(&self.connection, repos)
    }
}

/// How long a connection waits for another one's lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Switches the store to WAL (once per file: the mode is persistent). Several
/// connections switching a fresh file at once get SQLITE_BUSY without the busy
/// handler being asked (SQLite's deadlock avoidance), so that is retried here.
fn enable_wal(connection: &Connection) -> rusqlite::Result<()> {
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        let mode: rusqlite::Result<String> = connection.query_row("PRAGMA journal_mode", [], |row| row.get(0));
        if mode.as_deref().is_ok_and(|mode| mode.eq_ignore_ascii_case("wal")) {
            return Ok(());
        }
        match connection.query_row("PRAGMA journal_mode = WAL", [], |row| row.get::<_, String>(0)) {
            Ok(_) => return Ok(()),
            Err(error)
                if error.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(error) => return Err(error),
        }
    }
}

/// A stored JSON value (a row's `data`): an error names the row's `kind` and `key`.
pub(crate) fn decode<T: serde::de::DeserializeOwned>(kind: &'static str, key: &str, data: &str) -> Result<T> {
    serde_json::from_str(data).map_err(|source| StoreError::Decode { kind, key: key.to_string(), source })
}

/// Every row's `data` of `table`, decoded, by instance id.
fn all_by_instance<T: serde::de::DeserializeOwned>(
    connection: &Connection,
    table: &str,
    kind: &'static str,
) -> Result<std::collections::BTreeMap<String, T>> {
    let mut statement = connection.prepare(&format!("SELECT instance_id, data FROM {table}"))?;
    let rows = statement.query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?)))?;
    rows.map(|row| {
        let (instance_id, data) = row?;
        let value = decode(kind, &instance_id, &data)?;
        Ok((instance_id, value))
    })
    .collect()
}

/// The current time as stored: RFC 3339 in UTC, second precision.
pub(crate) fn now() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

pub use funnel::{record_dropped, record_dropped_total, record_passed};

#[cfg(test)]
mod error_tests {
    use super::*;

    #[test]
    fn a_read_only_store_and_a_full_disk_say_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        rusqlite::Connection::open(&path).unwrap().execute_batch("CREATE TABLE t (x INTEGER)").unwrap();
        let read_only =
            rusqlite::Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
        let error = StoreError::from(read_only.execute("INSERT INTO t VALUES (1)", []).unwrap_err());
        assert!(matches!(error, StoreError::ReadOnly(_)), "{error:?}");
        assert!(error.to_string().contains("read-only") && error.to_string().contains("--data-dir"), "{error}");

        let full = rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL), None);
        let error = StoreError::from(full);
        assert!(error.to_string().contains("disk that holds the data dir is full"), "{error}");
        let other = rusqlite::Error::QueryReturnedNoRows;
        assert!(matches!(StoreError::from(other), StoreError::Sqlite(_)));
    }
}
