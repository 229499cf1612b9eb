//! Who this process is, in a form that outlives it: a [`RunId`] (host name, PID and
//! the kernel's start time of the process). It names the holder of the data dir's
//! lock (`lock`) and labels every container a run starts (`sandbox`), so that a later
//! process can tell whether the run that owns a container is still alive: the same
//! host, a process with that PID, and the same start time (a PID reused by another
//! program has another start time).
//!
//! Liveness is read from `/proc` (Linux, where the Docker engine runs). A run on
//! another host, or one whose liveness cannot be read, counts as alive: leaving a
//! container behind costs disk space, removing a live one costs a wrong label.
//! It does not decide what to do with a dead run's leftovers; `sandbox` does.

use std::fmt;
use std::sync::OnceLock;

/// One run of swe-harvest: host name, PID, and the process's start time in clock
/// ticks since boot (field 22 of `/proc/<pid>/stat`; 0 where it cannot be read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunId {
    pub host: String,
    pub pid: u32,
    pub start_ticks: u64,
}

impl RunId {
    /// This process's run id (computed once).
    pub fn current() -> &'static RunId {
        static CURRENT: OnceLock<RunId> = OnceLock::new();
        CURRENT.get_or_init(|| {
            let pid = std::process::id();
            RunId { host: host_name(), pid, start_ticks: start_ticks(pid).unwrap_or(0) }
        })
    }

    /// The run id of the live process `pid` on this host, if there is one.
    pub fn of_process(pid: u32) -> Option<RunId> {
        Some(RunId { host: RunId::current().host.clone(), pid, start_ticks: start_ticks(pid)? })
    }

    /// Reads a run id back from its [`fmt::Display`] form, `host/pid/start_ticks`.
    pub fn parse(text: &str) -> Option<RunId> {
        let mut parts = text.rsplitn(3, '/');
        let start_ticks = parts.next()?.parse().ok()?;
        let pid = parts.next()?.parse().ok()?;
        let host = parts.next()?.to_string();
        Some(RunId { host, pid, start_ticks })
    }

    /// Whether the run is known to be over: it ran on this host and no process with
    /// its PID and start time exists any more. Runs of other hosts are never known
    /// to be over.
    pub fn is_gone(&self) -> bool {
        let current = RunId::current();
        if self.host != current.host {
            return false;
        }
        if self == current {
            return false;
        }
        match start_ticks(self.pid) {
            Some(ticks) => ticks != self.start_ticks,
            // No such process, when /proc works at all here.
            None => start_ticks(current.pid).is_some(),
        }
    }
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.host, self.pid, self.start_ticks)
    }
}

/// The host name, as the kernel knows it.
fn host_name() -> String {
    fs_err::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

/// The start time of process `pid` in clock ticks since boot, if it exists.
fn start_ticks(pid: u32) -> Option<u64> {
    let stat = fs_err::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_start_ticks(&stat)
}

/// Field 22 of a `/proc/<pid>/stat` line. The command name (field 2) is in
/// parentheses and may itself contain spaces and parentheses: count from the last `)`.
fn parse_start_ticks(stat: &str) -> Option<u64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    // Fields 3.. follow; the start time is field 22, the 20th after the name.
    after_name.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::{RunId, parse_start_ticks};

    #[test]
    fn start_ticks_are_read_past_a_command_name_with_spaces_and_parentheses() {
        let stat = "4242 (evil) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10 \
                    18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0";
        assert_eq!(parse_start_ticks(stat), Some(987654));
    }

    #[test]
    fn a_run_id_round_trips_through_its_label_form() {
        let run = RunId { host: "build-7.example".into(), pid: 31337, start_ticks: 123456 };
        assert_eq!(RunId::parse(&run.to_string()), Some(run));
        assert_eq!(RunId::parse("no-numbers"), None);
    }

    #[test]
    fn this_process_is_alive_and_a_finished_child_is_gone() {
        let current = RunId::current();
        assert!(current.start_ticks > 0, "/proc/self/stat is readable here");
        assert!(!current.is_gone());
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let child_run =
            RunId { pid: child.id(), start_ticks: super::start_ticks(child.id()).unwrap_or(1), ..current.clone() };
        child.wait().unwrap();
        assert!(child_run.is_gone(), "{child_run} ended and was reaped");
        let reused_pid = RunId { start_ticks: current.start_ticks + 1, ..current.clone() };
        assert!(reused_pid.is_gone(), "same PID, another start time: another process");
        let other_host = RunId { host: format!("{}-elsewhere", current.host), pid: 1, start_ticks: 1 };
        assert!(!other_host.is_gone(), "runs of other hosts are left alone");
    }
}
