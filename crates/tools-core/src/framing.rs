//! `Content-Length` framing, shared by LSP and DAP: pure functions over readers and
//! writers, apart from any transport.
//!
//! A frame is `Content-Length: N\r\n` (other headers allowed and ignored), a blank line,
//! then exactly `N` bytes of body.

use std::io::{self, BufRead, Write};

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The largest body accepted (64 MiB); anything bigger is a protocol error, not an allocation.
pub const MAX_BODY: usize = 64 * 1024 * 1024;

fn parse_header(line: &str, len: &mut Option<usize>) -> io::Result<()> {
    let Some((name, value)) = line.split_once(':') else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("malformed header line {line:?}"),
        ));
    };
    if name.trim().eq_ignore_ascii_case("content-length") {
        let n: usize = value.trim().parse().map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("bad Content-Length {value:?}"),
            )
        })?;
        if n > MAX_BODY {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("frame of {n} bytes is too large"),
            ));
        }
        *len = Some(n);
    }
    Ok(())
}

/// Reads one frame's body. `Ok(None)` on a clean end of stream before a frame starts.
pub fn read_frame(r: &mut dyn BufRead) -> io::Result<Option<Vec<u8>>> {
    let mut len = None;
    let mut line = String::new();
    let mut started = false;
    loop {
        line.clear();
        if r.read_line(&mut line)? == 0 {
            if started {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "stream ended inside a header",
                ));
            }
            return Ok(None);
        }
        started = true;
        let l = line.trim_end_matches(['\r', '\n']);
        if l.is_empty() {
            break;
        }
        parse_header(l, &mut len)?;
    }
    let n = len.ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidData, "frame without Content-Length")
    })?;
    let mut body = vec![0; n];
    r.read_exact(&mut body)?;
    Ok(Some(body))
}

/// Writes one frame.
pub fn write_frame(w: &mut dyn Write, body: &[u8]) -> io::Result<()> {
    write!(w, "Content-Length: {}\r\n\r\n", body.len())?;
    w.write_all(body)?;
    w.flush()
}

/// Async [`read_frame`].
pub async fn read_frame_async<R: AsyncBufRead + Unpin + ?Sized>(
    r: &mut R,
) -> io::Result<Option<Vec<u8>>> {
    let mut len = None;
    let mut line = String::new();
    let mut started = false;
    loop {
        line.clear();
        if r.read_line(&mut line).await? == 0 {
            if started {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "stream ended inside a header",
                ));
            }
            return Ok(None);
        }
        started = true;
        let l = line.trim_end_matches(['\r', '\n']);
        if l.is_empty() {
            if len.is_none() {
                // Tolerate stray blank lines between frames.
                started = false;
                continue;
            }
            break;
        }
        parse_header(l, &mut len)?;
    }
    let n = len.ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidData, "frame without Content-Length")
    })?;
    let mut body = vec![0; n];
    r.read_exact(&mut body).await?;
    Ok(Some(body))
}

/// Async [`write_frame`].
pub async fn write_frame_async<W: AsyncWrite + Unpin + ?Sized>(
    w: &mut W,
    body: &[u8],
) -> io::Result<()> {
    let mut buf = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    buf.extend_from_slice(body);
    w.write_all(&buf).await?;
    w.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let mut out = Vec::new();
        write_frame(&mut out, b"{\"a\":1}").unwrap();
        write_frame(&mut out, b"{}").unwrap();
        let mut r = io::Cursor::new(out);
        assert_eq!(read_frame(&mut r).unwrap().unwrap(), b"{\"a\":1}");
        assert_eq!(read_frame(&mut r).unwrap().unwrap(), b"{}");
        assert!(read_frame(&mut r).unwrap().is_none());
        let mut bad = io::Cursor::new(b"Content-Type: x\r\n\r\n{}".to_vec());
        assert!(read_frame(&mut bad).is_err());
        let mut huge = io::Cursor::new(b"Content-Length: 999999999999\r\n\r\n".to_vec());
        assert!(read_frame(&mut huge).is_err());
    }

    #[tokio::test]
    async fn async_round_trip() {
        let mut out = Vec::new();
        write_frame_async(&mut out, "é".as_bytes()).await.unwrap();
        let mut r = tokio::io::BufReader::new(&out[..]);
        assert_eq!(
            read_frame_async(&mut r).await.unwrap().unwrap(),
            "é".as_bytes()
        );
        assert!(read_frame_async(&mut r).await.unwrap().is_none());
    }
}
