//! The framed channel to a kernel: commands written to it, messages read from it by a task
//! of their own, both as `Content-Length` framed JSON (tools-core's framing), over the
//! platform layer's private channel (pipes on fds 3 and 4 on Unix, named pipes on Windows).
//! A write that the kernel does not take within its bound is an error, never a hang.

use std::pin::Pin;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::mpsc;

use crate::protocol::{FromKernel, ToKernel};

/// How long a command may take to be written before the kernel counts as not reading.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);

/// A message from the kernel, or why the channel broke (then no more follow).
pub(super) type Received = Result<FromKernel, String>;

/// The host's ends of one kernel's protocol pipes.
pub(super) struct KernelChannel {
    commands: Pin<Box<dyn AsyncWrite + Send>>,
    messages: mpsc::Receiver<Received>,
    reader: tokio::task::JoinHandle<()>,
}

impl Drop for KernelChannel {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl KernelChannel {
    /// Takes the channel's command and message ends; starts the task that reads and
    /// decodes messages.
    pub(super) fn new(
        commands: Pin<Box<dyn AsyncWrite + Send>>,
        messages: Pin<Box<dyn AsyncRead + Send>>,
    ) -> Self {
        let (tx, rx) = mpsc::channel(256);
        let reader = tokio::spawn(read_messages(messages, tx));
        KernelChannel {
            commands,
            messages: rx,
            reader,
        }
    }

    /// Writes one command; `Err` says why it could not be delivered.
    pub(super) async fn send(&mut self, msg: &ToKernel) -> Result<(), String> {
        let body = serde_json::to_vec(msg).map_err(|e| e.to_string())?;
        match tokio::time::timeout(
            SEND_TIMEOUT,
            tools_core::framing::write_frame_async(&mut self.commands, &body),
        )
        .await
        {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("the kernel stopped reading its commands".into()),
        }
    }

    /// The next message; `None` once the kernel closed its end.
    pub(super) async fn recv(&mut self) -> Option<Received> {
        self.messages.recv().await
    }

    /// A message that has already arrived, if any.
    pub(super) fn try_recv(&mut self) -> Option<Received> {
        self.messages.try_recv().ok()
    }
}

/// Decodes one message. The drivers escape text that is not Unicode themselves; a message
/// that still holds some (bytes that are not UTF-8, a lone surrogate escape) is repaired
/// rather than taken as a broken protocol, so the kernel and its state survive any output.
pub(crate) fn decode_message(body: &[u8]) -> Result<FromKernel, String> {
    serde_json::from_slice::<FromKernel>(body).or_else(|e| {
        if tools_core::json_unicode::unicode_problem(body).is_none() {
            return Err(format!("bad message from the kernel: {e}"));
        }
        serde_json::from_str(&tools_core::json_unicode::repair(body))
            .map_err(|e| format!("bad message from the kernel: {e}"))
    })
}

async fn read_messages(receiver: Pin<Box<dyn AsyncRead + Send>>, tx: mpsc::Sender<Received>) {
    let mut reader = BufReader::new(receiver);
    loop {
        match tools_core::framing::read_frame_async(&mut reader).await {
            Ok(Some(body)) => {
                let msg = decode_message(&body);
                if tx.send(msg).await.is_err() {
                    return;
                }
            }
            Ok(None) => return,
            Err(e) => {
                let _ = tx
                    .send(Err(format!("bad frame from the kernel: {e}")))
                    .await;
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_with_text_that_is_not_unicode_are_repaired_not_fatal() {
        let lone = br#"{"type":"stream","name":"stdout","text":"a\ud800b"}"#;
        assert_eq!(
            decode_message(lone),
            Ok(FromKernel::Stream {
                name: "stdout".into(),
                text: "a\u{fffd}b".into(),
                cut_before: 0
            })
        );
        let bytes = b"{\"type\":\"stream\",\"name\":\"stdout\",\"text\":\"\xff\"}";
        assert!(
            matches!(decode_message(bytes), Ok(FromKernel::Stream { text, .. }) if text == "\u{fffd}")
        );
        assert!(decode_message(br#"{"type":"nonsense"}"#).is_err());
    }
}
