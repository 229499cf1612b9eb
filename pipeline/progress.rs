//! Progress reporting without terminal code: stages call a [`Reporter`], and the
//! command line implements it (bars on a terminal, plain log lines elsewhere).

/// Receives progress from long-running stage work. Every method has a no-op default.
pub trait Reporter: Send + Sync {
    /// A new unit of work begins; `total` is the number of steps when known.
    fn start(&self, _label: &str, _total: Option<u64>) {}
    /// `delta` more steps are done.
    fn advance(&self, _delta: u64) {}
    /// A short status, such as a rate-limit countdown.
    fn message(&self, _message: &str) {}
    /// The unit of work is over.
    fn finish(&self) {}
}

/// A reporter that reports nothing, for tests and library callers.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoReporter;

impl Reporter for NoReporter {}
