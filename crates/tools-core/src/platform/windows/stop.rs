//! The requests to stop this process on Windows: the console's Ctrl-C and Ctrl-Break, and
//! (when asked, as SIGHUP is on Unix) its window closing. They are reported with the
//! numbers of their Unix counterparts (SIGINT 2, SIGHUP 1), so exit codes read the same.

use tokio::signal::windows::{CtrlBreak, CtrlC, CtrlClose, ctrl_break, ctrl_c, ctrl_close};

const SIGHUP: i32 = 1;
const SIGINT: i32 = 2;

/// Handlers for the console events that ask this process to stop, installed when made.
pub struct StopRequests {
    c: Option<CtrlC>,
    brk: Option<CtrlBreak>,
    close: Option<CtrlClose>,
}

impl StopRequests {
    /// Installs the handlers for Ctrl-C and Ctrl-Break, and the console's closing with
    /// `hangup`. One that cannot be installed (no console) is logged and never fires.
    pub fn install(hangup: bool) -> StopRequests {
        fn logged<T>(what: &str, r: std::io::Result<T>) -> Option<T> {
            r.map_err(|e| tracing::warn!("cannot handle {what}: {e}"))
                .ok()
        }
        StopRequests {
            c: logged("Ctrl-C", ctrl_c()),
            brk: logged("Ctrl-Break", ctrl_break()),
            close: if hangup {
                logged("the console's closing", ctrl_close())
            } else {
                None
            },
        }
    }

    /// The Unix number of the next request to stop (SIGINT for Ctrl-C and Ctrl-Break,
    /// SIGHUP for the console's closing).
    pub async fn recv(&mut self) -> i32 {
        async fn c(s: &mut Option<CtrlC>) {
            match s {
                Some(s) => {
                    s.recv().await;
                }
                None => std::future::pending().await,
            }
        }
        async fn brk(s: &mut Option<CtrlBreak>) {
            match s {
                Some(s) => {
                    s.recv().await;
                }
                None => std::future::pending().await,
            }
        }
        async fn close(s: &mut Option<CtrlClose>) {
            match s {
                Some(s) => {
                    s.recv().await;
                }
                None => std::future::pending().await,
            }
        }
        tokio::select! {
            _ = c(&mut self.c) => SIGINT,
            _ = brk(&mut self.brk) => SIGINT,
            _ = close(&mut self.close) => SIGHUP,
        }
    }
}
