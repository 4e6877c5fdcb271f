//! Which sessions are idle: no request for the idle timeout and none still being answered.
//!
//! rmcp's own keep-alive counts only messages, so a session whose one call runs longer than
//! the timeout (a long `eval`, a debugger waiting on a breakpoint) would be closed under the
//! call. Here a call whose answer is still streaming keeps its session busy, and the idle
//! clock starts when that answer ends.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, HttpBody};
use tokio::time::Instant;

#[derive(Debug)]
struct SessionActivity {
    last: Instant,
    in_flight: usize,
}

/// Activity of every open session, by id.
#[derive(Debug, Default)]
pub(crate) struct Activity {
    sessions: Mutex<HashMap<String, SessionActivity>>,
}

impl Activity {
    /// Notes a request on `id` that needs no answer stream (or a new session).
    pub(crate) fn touch(&self, id: &str) {
        if let Ok(mut s) = self.sessions.lock() {
            s.entry(id.to_string())
                .and_modify(|a| a.last = Instant::now())
                .or_insert(SessionActivity {
                    last: Instant::now(),
                    in_flight: 0,
                });
        }
    }

    /// Notes a request on `id` whose answer is under way until the guard drops.
    pub(crate) fn begin(self: &Arc<Self>, id: &str) -> InFlight {
        if let Ok(mut s) = self.sessions.lock() {
            let a = s.entry(id.to_string()).or_insert(SessionActivity {
                last: Instant::now(),
                in_flight: 0,
            });
            a.in_flight += 1;
            a.last = Instant::now();
        }
        InFlight {
            activity: Arc::clone(self),
            id: id.to_string(),
        }
    }

    /// Forgets a closed session.
    pub(crate) fn forget(&self, id: &str) {
        if let Ok(mut s) = self.sessions.lock() {
            s.remove(id);
        }
    }

    /// How long session `id` has been idle: zero while a request of it is answered.
    pub(crate) fn idle_for(&self, id: &str) -> Duration {
        let Ok(s) = self.sessions.lock() else {
            return Duration::ZERO;
        };
        match s.get(id) {
            Some(a) if a.in_flight == 0 => a.last.elapsed(),
            _ => Duration::ZERO,
        }
    }

    /// The sessions with nothing in flight and no request for `timeout`.
    pub(crate) fn idle(&self, timeout: Duration) -> Vec<String> {
        let Ok(s) = self.sessions.lock() else {
            return Vec::new();
        };
        s.iter()
            .filter(|(_, a)| a.in_flight == 0 && a.last.elapsed() >= timeout)
            .map(|(id, _)| id.clone())
            .collect()
    }
}

/// A request being answered; its session is busy until this drops.
pub(crate) struct InFlight {
    activity: Arc<Activity>,
    id: String,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Ok(mut s) = self.activity.sessions.lock()
            && let Some(a) = s.get_mut(&self.id)
        {
            a.in_flight = a.in_flight.saturating_sub(1);
            a.last = Instant::now();
        }
    }
}

/// Requests being answered across the whole server, sessions or not: a stopping server
/// waits for them (up to its grace period) before it closes the sessions.
#[derive(Debug, Default)]
pub(crate) struct Answering(std::sync::atomic::AtomicUsize);

impl Answering {
    /// Notes a request being answered until the guard drops.
    pub(crate) fn begin(self: &Arc<Self>) -> Answer {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Answer(Arc::clone(self))
    }

    /// How many requests are being answered now.
    pub(crate) fn count(&self) -> usize {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// One request being answered (see [`Answering`]).
pub(crate) struct Answer(Arc<Answering>);

impl Drop for Answer {
    fn drop(&mut self) {
        self.0.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A response body that keeps its request in flight until it is sent or dropped.
pub(crate) struct BusyBody {
    inner: Body,
    _busy: Option<InFlight>,
    _answer: Answer,
}

impl BusyBody {
    /// Wraps `inner`; `busy` is the session's in-flight mark, when the request has one.
    pub(crate) fn wrap(inner: Body, busy: Option<InFlight>, answer: Answer) -> Body {
        Body::new(BusyBody {
            inner,
            _busy: busy,
            _answer: answer,
        })
    }
}

impl HttpBody for BusyBody {
    type Data = <Body as HttpBody>::Data;
    type Error = <Body as HttpBody>::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_with_a_call_in_flight_is_never_idle() {
        let activity = Arc::new(Activity::default());
        activity.touch("a");
        let busy = activity.begin("b");
        assert_eq!(activity.idle(Duration::ZERO), vec!["a".to_string()]);
        assert!(activity.idle(Duration::from_secs(3600)).is_empty());
        drop(busy);
        let mut idle = activity.idle(Duration::ZERO);
        idle.sort();
        assert_eq!(idle, vec!["a".to_string(), "b".to_string()]);
        // The call's end restarts the clock.
        assert!(activity.idle(Duration::from_secs(3600)).is_empty());
        activity.forget("a");
        assert_eq!(activity.idle(Duration::ZERO), vec!["b".to_string()]);
    }
}
