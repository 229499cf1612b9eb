//! "Stop now, keep what is done": Ctrl-C (SIGINT) and SIGTERM (what `kill`,
//! `timeout` and job schedulers send) mean the same to the stages that run
//! containers (validate, with or without `--input`, probe and evaluate). Each listens
//! with one [`Interruption`] from its start, and on either signal removes its running
//! containers, keeps what it stored and exits non-zero. It does not decide what a
//! stage keeps; the stage does.

use tokio::signal::unix::{Signal, SignalKind, signal};

crate::spelled::spelled_enum! {
    /// Which signal stopped the work.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Interrupt {
        CtrlC => "Ctrl-C",
        Terminate => "SIGTERM",
    }
}

/// Listens for Ctrl-C and SIGTERM from the moment it is made: from then on neither
/// kills the process outright.
pub struct Interruption {
    interrupt: Option<Signal>,
    terminate: Option<Signal>,
}

impl Interruption {
    /// Starts listening. Must be called inside the Tokio runtime. A signal that
    /// cannot be listened for (no such thing on this system) is left at its default.
    pub fn listen() -> Interruption {
        let listen = |kind: SignalKind, name: &str| match signal(kind) {
            Ok(stream) => Some(stream),
            Err(error) => {
                tracing::warn!(%error, "cannot listen for {name}; it will stop the process without cleaning up");
                None
            }
        };
        Interruption {
            interrupt: listen(SignalKind::interrupt(), "Ctrl-C"),
            terminate: listen(SignalKind::terminate(), "SIGTERM"),
        }
    }

    /// Completes when Ctrl-C or SIGTERM arrives.
    pub async fn received(&mut self) -> Interrupt {
        async fn next(stream: Option<&mut Signal>) {
            match stream {
                Some(stream) => {
                    stream.recv().await;
                }
                None => std::future::pending().await,
            }
        }
        tokio::select! {
            () = next(self.interrupt.as_mut()) => Interrupt::CtrlC,
            () = next(self.terminate.as_mut()) => Interrupt::Terminate,
        }
    }
}

/// Runs `jobs`, `workers` at a time, until every one has ended or Ctrl-C or SIGTERM
/// arrives: the results of the jobs that ended, in the order they ended (`ended` sees
/// each as it comes), and the signal that stopped the rest, if one did. The jobs not
/// ended are dropped; the stage then removes their containers.
pub async fn pooled<T, Job>(
    interruption: &mut Interruption,
    jobs: impl IntoIterator<Item = Job>,
    workers: usize,
    mut ended: impl FnMut(&T),
) -> (Vec<T>, Option<Interrupt>)
where
    Job: std::future::Future<Output = T>,
{
    use futures::StreamExt as _;
    let mut results = Vec::new();
    let stopped = {
        let pool = async {
            let mut stream = futures::stream::iter(jobs).buffer_unordered(workers.max(1));
            while let Some(result) = stream.next().await {
                ended(&result);
                results.push(result);
            }
        };
        tokio::select! {
            () = pool => None,
            interrupt = interruption.received() => Some(interrupt),
        }
    };
    (results, stopped)
}
