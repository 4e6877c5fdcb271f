//! The stdio transport, with a guard in front of rmcp's reader.
//!
//! rmcp drops a line it cannot decode without answering it (it cannot know which request
//! the line was). A request whose arguments hold a lone surrogate escape (`"\ud800"`) or
//! bytes that are not UTF-8 is perfectly readable once repaired, though, so the guard reads
//! each line first: a line with such text is answered here with invalid-params, naming the
//! problem, and never reaches rmcp; every other line is passed on unchanged. Answers from
//! rmcp and from the guard are written whole, one line at a time, so they never interleave.

use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream,
};
use tokio::sync::mpsc;
use tools_core::json_unicode::{repair, unicode_problem};

/// Longest line the guard inspects; longer lines are passed on as they are (rmcp applies its
/// own cap to them).
const MAX_CHECKED_LINE: usize = 16 * 1024 * 1024;
/// Size of the in-memory pipes between the guard and rmcp.
const PIPE_BYTES: usize = 1024 * 1024;

/// What to do with one line from the client.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Pass it to rmcp unchanged.
    Forward,
    /// Answer with this JSON-RPC error response instead.
    Answer(Value),
    /// A notification with undecodable text: nobody waits for an answer; drop it.
    Drop,
}

/// Judges one line (without its newline).
pub fn judge(line: &[u8]) -> Verdict {
    if serde_json::from_slice::<Value>(line).is_ok() {
        return Verdict::Forward;
    }
    let Some(problem) = unicode_problem(line) else {
        return Verdict::Forward;
    };
    let Ok(msg) = serde_json::from_str::<Value>(&repair(line)) else {
        return Verdict::Forward;
    };
    let id = match msg.get("id") {
        Some(id @ (Value::Number(_) | Value::String(_))) => id.clone(),
        _ => return Verdict::Drop,
    };
    if msg.get("method").is_none() {
        // A response from the client (to an elicitation, say) with bad text: nothing to answer.
        return Verdict::Drop;
    }
    Verdict::Answer(json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": -32602,
            "message": format!(
                "invalid arguments: the request holds {problem}, which is not valid Unicode text; \
                 send every string as valid UTF-8 (pair each surrogate escape, or drop it)"
            ),
        },
    }))
}

/// Spawns the guard between `input`/`output` (the process's stdin and stdout) and returns
/// the reader and writer rmcp serves on, plus the task that writes to `output` (await it
/// after the service ends, so the last answers are flushed).
/// Each in-memory pipe is a duplex used one way: dropping one end is end of stream for
/// the other, which is how rmcp's ending reaches the writer task.
pub fn guarded<R, W>(
    input: R,
    output: W,
) -> (DuplexStream, DuplexStream, tokio::task::JoinHandle<()>)
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (to_rmcp_r, to_rmcp_w) = tokio::io::duplex(PIPE_BYTES);
    let (from_rmcp_r, from_rmcp_w) = tokio::io::duplex(PIPE_BYTES);
    let (answers_tx, answers_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    tokio::spawn(read_client(input, to_rmcp_w, answers_tx));
    let writer = tokio::spawn(write_client(from_rmcp_r, answers_rx, output));
    (to_rmcp_r, from_rmcp_w, writer)
}

async fn read_client<R, W>(input: R, mut to_rmcp: W, answers: mpsc::UnboundedSender<Vec<u8>>)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut input = BufReader::with_capacity(64 * 1024, input);
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = match (&mut input)
            .take(MAX_CHECKED_LINE as u64)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let whole = line.ends_with(b"\n") || n < MAX_CHECKED_LINE;
        let body = line.strip_suffix(b"\n").unwrap_or(&line);
        let body = body.strip_suffix(b"\r").unwrap_or(body);
        let verdict = if whole { judge(body) } else { Verdict::Forward };
        match verdict {
            Verdict::Forward => {
                if to_rmcp.write_all(&line).await.is_err() {
                    break;
                }
            }
            Verdict::Answer(v) => {
                tracing::debug!("answered a request whose text is not Unicode");
                let mut bytes = serde_json::to_vec(&v).unwrap_or_default();
                bytes.push(b'\n');
                let _ = answers.send(bytes);
            }
            Verdict::Drop => tracing::debug!("dropped a notification whose text is not Unicode"),
        }
    }
    // End of input: dropping our end is end of stream for rmcp, which ends the service.
    drop(to_rmcp);
}

async fn write_client<R, W>(from_rmcp: R, mut answers: mpsc::UnboundedReceiver<Vec<u8>>, mut out: W)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut from_rmcp = BufReader::new(from_rmcp);
    let mut line = Vec::new();
    let mut answers_open = true;
    loop {
        tokio::select! {
            read = from_rmcp.read_until(b'\n', &mut line) => {
                match read {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if out.write_all(&line).await.is_err() || out.flush().await.is_err() {
                            return;
                        }
                        line.clear();
                    }
                }
            }
            answer = answers.recv(), if answers_open => match answer {
                Some(bytes) => {
                    if out.write_all(&bytes).await.is_err() || out.flush().await.is_err() {
                        return;
                    }
                }
                None => answers_open = false,
            },
        }
    }
    // Answers decided before rmcp's last line must not be lost.
    while let Ok(bytes) = answers.try_recv() {
        if out.write_all(&bytes).await.is_err() {
            break;
        }
    }
    let _ = out.flush().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_in_a_request_are_answered_with_invalid_params() {
        let line = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read","arguments":{"path":"\ud800"}}}"#;
        match judge(line) {
            Verdict::Answer(v) => {
                assert_eq!(v["id"], 7);
                assert_eq!(v["error"]["code"], -32602);
                let m = v["error"]["message"].as_str().unwrap();
                assert!(m.contains("lone surrogate") && m.contains("\\ud800"), "{m}");
            }
            other => panic!("unexpected {other:?}"),
        }
        let note = br#"{"jsonrpc":"2.0","method":"notifications/x","params":{"a":"\udc00"}}"#;
        assert_eq!(judge(note), Verdict::Drop);
        let fine = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"\ud83d\ude00"}}"#;
        assert_eq!(judge(fine), Verdict::Forward);
        assert_eq!(judge(b"not json at all"), Verdict::Forward);
        let bytes = b"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tools/call\",\"params\":{\"x\":\"\xff\"}}";
        assert!(matches!(judge(bytes), Verdict::Answer(v) if v["id"] == "a"));
    }

    #[tokio::test]
    async fn the_guard_answers_bad_lines_and_forwards_the_rest_in_order() {
        let (server_r, client_w) = tokio::io::duplex(1 << 16);
        let (client_r, server_w) = tokio::io::duplex(1 << 16);
        let (mut rmcp_in, mut rmcp_out, writer) = guarded(server_r, server_w);
        let mut client_w = client_w;
        client_w
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":{\"s\":\"\\ud800\"}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\"}\n")
            .await
            .unwrap();
        drop(client_w);
        let mut forwarded = String::new();
        AsyncReadExt::read_to_string(&mut rmcp_in, &mut forwarded)
            .await
            .unwrap();
        assert_eq!(
            forwarded,
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\"}\n"
        );
        rmcp_out
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n")
            .await
            .unwrap();
        drop(rmcp_out);
        writer.await.unwrap();
        let mut answered = String::new();
        let mut client_r = client_r;
        AsyncReadExt::read_to_string(&mut client_r, &mut answered)
            .await
            .unwrap();
        let lines: Vec<Value> = answered
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2, "{answered}");
        let ids: Vec<&Value> = lines.iter().map(|l| &l["id"]).collect();
        assert!(
            ids.contains(&&json!(1)) && ids.contains(&&json!(2)),
            "{answered}"
        );
    }
}
