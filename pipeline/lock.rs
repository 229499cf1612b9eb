//! One owner per data dir: the commands that write (discover, crawl, mirror, extract,
//! validate with or without `--input`, release, evaluate, run) hold an advisory lock
//! on `<data-dir>/swe-harvest.lock` for the whole life of the process, taken before
//! they do anything else. A second writer is refused at once (it never waits), with
//! the holder's PID, command line and start time, which the holder writes into the
//! lock file. Read-only commands (`status`, `export`) never take it: the store's WAL
//! lets them read while the owner writes. `review` takes it only for the moment it
//! writes a decision, and shows its page read-only while another process holds it
//! ([`DataDirLock::check_free`]).
//!
//! Why: two writers on one data dir would sweep each other's containers and record
//! the killed runs as failures, and interleave stage work in ways no stage is
//! designed for (docs/architecture.md: "one SQLite file per data dir, owned by one
//! writer at a time"). The lock is `flock(2)` through `rustix` (already built for `tar` and
//! `tempfile`, with its `fs` feature; safe, unlike `libc::flock`, and no new crate,
//! unlike `fs4`, which the tree only lists): the kernel releases it when the process
//! ends however it ends, `kill -9` included, so a stale lock never needs cleaning up.
//! The file itself stays (deleting a lock file races with a process that just opened
//! it); its content describes the last holder and is only trusted while it is locked.
//!
//! This module does not know about the store or containers; it only says who owns
//! the data dir.

use std::io::{Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::process::RunId;

/// The lock file's name inside the data dir.
pub const LOCK_FILE: &str = "swe-harvest.lock";

/// Who holds the lock: written by the holder into the lock file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    pub pid: u32,
    /// The command line, with credentials in URLs replaced by `****`.
    pub command: String,
    /// The holder's [`RunId`], as its containers are labelled.
    pub run: String,
    /// When it took the lock (RFC 3339, UTC).
    pub since: String,
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "the data dir `{}` is in use by another swe-harvest process: {}",
        data_dir.display(),
        describe(holder.as_deref(), lock_path)
    )]
    Held { data_dir: PathBuf, lock_path: PathBuf, holder: Option<Box<Holder>> },
    #[error("failed to create or lock `{}`; check that the data dir is writable", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl LockError {
    /// What to do about it.
    pub fn hint(&self) -> Option<String> {
        match self {
            LockError::Held { holder, .. } => {
                let stop = match holder {
                    Some(holder) => format!("stop it (`kill {}`", holder.pid),
                    None => "stop it (".to_string(),
                };
                Some(format!(
                    "one process writes to a data dir at a time. Wait for the other one to finish, or {stop}: it \
                     removes its containers and keeps what it stored, and a rerun resumes), or use another \
                     --data-dir. `status` and `export` work while it runs."
                ))
            }
            LockError::Io { .. } => None,
        }
    }
}

fn describe(holder: Option<&Holder>, lock_path: &Path) -> String {
    match holder {
        Some(holder) => format!("PID {} (`{}`), running since {}", holder.pid, holder.command, holder.since),
        None => format!("its PID is not written in `{}` yet", lock_path.display()),
    }
}

/// The data dir's lock, held until this value is dropped (or the process ends).
#[derive(Debug)]
pub struct DataDirLock {
    // Never read: holding the open file is what holds the lock.
    _file: fs_err::File,
    path: PathBuf,
}

impl DataDirLock {
    /// Takes the lock of `data_dir` (created if missing) for this process, or says
    /// who holds it. `command` is this process's command line, written for the
    /// next contender to read.
    pub fn acquire(data_dir: &Path, command: &str) -> Result<DataDirLock, LockError> {
        let path = data_dir.join(LOCK_FILE);
        let io_error = |source| LockError::Io { path: path.clone(), source };
        fs_err::create_dir_all(data_dir).map_err(io_error)?;
        let mut file = fs_err::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io_error)?;
        match rustix::fs::flock(file.file(), rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(errno) if errno == rustix::io::Errno::WOULDBLOCK => {
                return Err(LockError::Held {
                    data_dir: data_dir.to_path_buf(),
                    holder: read_holder(&path).map(Box::new),
                    lock_path: path,
                });
            }
            Err(errno) => return Err(io_error(errno.into())),
        }
        let current = RunId::current();
        let holder = Holder {
            pid: current.pid,
            command: crate::secret::redact_url(command),
            run: current.to_string(),
            since: crate::store::now(),
        };
        let text = serde_json::to_string(&holder).expect("a holder serializes") + "\n";
        file.set_len(0).map_err(io_error)?;
        file.rewind().map_err(io_error)?;
        file.write_all(text.as_bytes()).map_err(io_error)?;
        file.sync_data().map_err(io_error)?;
        tracing::debug!(path = %path.display(), pid = holder.pid, "took the data dir lock");
        Ok(DataDirLock { _file: file, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Says whether another process holds the lock of `data_dir` now, without taking
    /// it and without writing anything: `Err(LockError::Held)` with the holder when one
    /// does. For `review`, which writes only for the moment of a decision and shows
    /// itself read-only while a stage owns the data dir.
    pub fn check_free(data_dir: &Path) -> Result<(), LockError> {
        let path = data_dir.join(LOCK_FILE);
        let file = match fs_err::OpenOptions::new().read(true).open(&path) {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(source) => return Err(LockError::Io { path, source }),
        };
        match rustix::fs::flock(file.file(), rustix::fs::FlockOperation::NonBlockingLockShared) {
            // Closing the file (dropping it) releases the shared lock at once.
            Ok(()) => Ok(()),
            Err(errno) if errno == rustix::io::Errno::WOULDBLOCK => Err(LockError::Held {
                data_dir: data_dir.to_path_buf(),
                holder: read_holder(&path).map(Box::new),
                lock_path: path,
            }),
            Err(errno) => Err(LockError::Io { path, source: errno.into() }),
        }
    }
}

/// The holder written in a locked file. A holder writes right after it takes the
/// lock, so an empty or half-written file, or one that still names an earlier holder
/// that is gone, is read again for a moment.
fn read_holder(path: &Path) -> Option<Holder> {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let holder = fs_err::read_to_string(path)
            .ok()
            .and_then(|text| serde_json::from_str::<Holder>(text.trim()).ok())
            .filter(|holder| RunId::parse(&holder.run).is_some_and(|run| !run.is_gone()));
        if holder.is_some() || Instant::now() >= deadline {
            return holder;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[cfg(test)]
mod tests {
    use super::{DataDirLock, LockError};
    use crate::secret::redact_url as redact_url_credentials;

    #[test]
    fn a_second_lock_on_the_same_data_dir_is_refused_with_the_holders_pid_until_the_first_is_dropped() {
        let data_dir = tempfile::tempdir().unwrap();
        let first = DataDirLock::acquire(data_dir.path(), "swe-harvest validate --runs 2").unwrap();
        let refused = DataDirLock::acquire(data_dir.path(), "swe-harvest crawl").unwrap_err();
        let LockError::Held { holder: Some(holder), .. } = &refused else { panic!("{refused:?}") };
        assert_eq!(holder.pid, std::process::id());
        assert_eq!(holder.command, "swe-harvest validate --runs 2");
        let message = refused.to_string();
        assert!(message.contains(&format!("PID {}", std::process::id())), "{message}");
        assert!(refused.hint().unwrap().contains(&format!("kill {}", std::process::id())));
        drop(first);
        DataDirLock::acquire(data_dir.path(), "swe-harvest crawl").expect("free again once the holder is gone");
    }

    #[test]
    fn checking_whether_the_lock_is_free_names_the_holder_and_never_takes_it() {
        let data_dir = tempfile::tempdir().unwrap();
        DataDirLock::check_free(data_dir.path()).expect("no lock file: free");
        let holder = DataDirLock::acquire(data_dir.path(), "swe-harvest validate").unwrap();
        let held = DataDirLock::check_free(data_dir.path()).unwrap_err();
        assert!(held.to_string().contains("`swe-harvest validate`"), "{held}");
        drop(holder);
        DataDirLock::check_free(data_dir.path()).expect("free once the holder is gone");
        let _taken = DataDirLock::acquire(data_dir.path(), "swe-harvest review").expect("checking took nothing");
    }

    #[test]
    fn credentials_in_urls_of_the_command_line_are_not_written_to_the_lock_file() {
        assert_eq!(
            redact_url_credentials("swe-harvest mirror --clone-url https://bot:ghp_secret@example.com/{owner}/{name}"),
            "swe-harvest mirror --clone-url https://****@example.com/{owner}/{name}"
        );
        assert_eq!(
            redact_url_credentials("crawl --api-url http://localhost:8080"),
            "crawl --api-url http://localhost:8080"
        );
    }
}
