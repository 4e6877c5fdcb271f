//! The requests to stop this process on Unix: SIGTERM, SIGINT and (when asked) SIGHUP.

use tokio::signal::unix::{Signal, SignalKind, signal};

/// The numbers are the same on Linux and macOS.
const SIGHUP: i32 = 1;
const SIGINT: i32 = 2;
const SIGTERM: i32 = 15;

/// Handlers for the signals that ask this process to stop, installed when made: from then
/// on those signals no longer take their default action (ending the process) but are
/// received here.
pub struct StopRequests {
    term: Option<Signal>,
    int: Option<Signal>,
    hup: Option<Signal>,
}

/// Waits for the next delivery of `s`; never, if its handler could not be installed.
async fn next(s: &mut Option<Signal>) {
    match s {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending().await,
    }
}

impl StopRequests {
    /// Installs the handlers for SIGTERM and SIGINT, and SIGHUP with `hangup`. A handler
    /// that cannot be installed is logged and its signal keeps its default action.
    pub fn install(hangup: bool) -> StopRequests {
        let install = |kind: SignalKind, number: i32| {
            signal(kind)
                .map_err(|e| tracing::warn!("cannot handle signal {number}: {e}"))
                .ok()
        };
        StopRequests {
            term: install(SignalKind::terminate(), SIGTERM),
            int: install(SignalKind::interrupt(), SIGINT),
            hup: if hangup {
                install(SignalKind::hangup(), SIGHUP)
            } else {
                None
            },
        }
    }

    /// The signal number of the next request to stop.
    pub async fn recv(&mut self) -> i32 {
        tokio::select! {
            _ = next(&mut self.term) => SIGTERM,
            _ = next(&mut self.int) => SIGINT,
            _ = next(&mut self.hup) => SIGHUP,
        }
    }
}
