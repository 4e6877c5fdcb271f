//! The per-user daemon's local socket on Windows: a named pipe whose name is derived from
//! the daemon's socket path (so one per user and build), created with a DACL that lets only
//! this user in and refusing remote clients; every connection's client process is checked to
//! run as this user (the DACL is the first fence, the client's token the second).

use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::windows::named_pipe::{
    ClientOptions, NamedPipeClient, NamedPipeServer, ServerOptions,
};
use windows_sys::Win32::Foundation::{CloseHandle, ERROR_PIPE_BUSY, HANDLE, LocalFree};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1,
};
use windows_sys::Win32::Security::{
    EqualSid, GetTokenInformation, PSECURITY_DESCRIPTOR, SECURITY_ATTRIBUTES, TOKEN_QUERY,
    TOKEN_USER, TokenUser,
};
use windows_sys::Win32::System::Pipes::GetNamedPipeClientProcessId;
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, OpenProcess, OpenProcessToken, PROCESS_QUERY_LIMITED_INFORMATION,
};

/// A connection to or from the daemon: one end of a named pipe.
#[derive(Debug)]
pub enum LocalStream {
    /// The daemon's end.
    Server(NamedPipeServer),
    /// A conversation's end.
    Client(NamedPipeClient),
}

impl AsyncRead for LocalStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            LocalStream::Server(s) => Pin::new(s).poll_read(cx, buf),
            LocalStream::Client(c) => Pin::new(c).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for LocalStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            LocalStream::Server(s) => Pin::new(s).poll_write(cx, buf),
            LocalStream::Client(c) => Pin::new(c).poll_write(cx, buf),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            LocalStream::Server(s) => Pin::new(s).poll_flush(cx),
            LocalStream::Client(c) => Pin::new(c).poll_flush(cx),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            LocalStream::Server(s) => Pin::new(s).poll_shutdown(cx),
            LocalStream::Client(c) => Pin::new(c).poll_shutdown(cx),
        }
    }
}

/// The daemon's listening pipe: one instance waits for the next connection at a time.
#[derive(Debug)]
pub struct LocalListener {
    name: String,
    path: PathBuf,
    waiting: tokio::sync::Mutex<NamedPipeServer>,
}

/// The pipe name for a daemon's socket path: `\\.\pipe\agent-tools-` and a digest of the
/// path (which names the user's folder and the build).
fn pipe_name(path: &Path) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(path.as_os_str().as_encoded_bytes());
    format!(r"\\.\pipe\agent-tools-{}", hex::encode(&digest[..12]))
}

impl LocalListener {
    /// Listens on the pipe for `path`. Another process already listening there (a second
    /// daemon) is an error: the first instance is created with `first_pipe_instance`.
    pub fn bind(path: &Path) -> io::Result<LocalListener> {
        let name = pipe_name(path);
        let first = create_instance(&name, true)?;
        // A file at the path tells `other_builds` and people that a daemon listens here.
        std::fs::write(path, name.as_bytes())?;
        Ok(LocalListener {
            name,
            path: path.to_path_buf(),
            waiting: tokio::sync::Mutex::new(first),
        })
    }

    /// The next connection, and whether its client runs as this user.
    pub async fn accept(&self) -> io::Result<(LocalStream, bool)> {
        let mut waiting = self.waiting.lock().await;
        waiting.connect().await?;
        let next = create_instance(&self.name, false)?;
        let connected = std::mem::replace(&mut *waiting, next);
        let same_user = client_is_this_user(&connected).unwrap_or(false);
        Ok((LocalStream::Server(connected), same_user))
    }

    /// Where it listens (the file naming its pipe).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Connects to the daemon's pipe for `path` (retrying while every instance is busy).
pub async fn connect_local(path: &Path) -> io::Result<LocalStream> {
    let name = pipe_name(path);
    for _ in 0..50 {
        match ClientOptions::new().open(&name) {
            Ok(c) => return Ok(LocalStream::Client(c)),
            Err(e) if e.raw_os_error() == Some(ERROR_PIPE_BUSY as i32) => {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::TimedOut,
        "every instance of the daemon's pipe stayed busy",
    ))
}

/// Whether the daemon's local sockets exist on this OS.
pub const LOCAL_SOCKETS: bool = true;

/// Starts `cmd` without a console and in a process group of its own, so that the console
/// of the process that started it (closed, or sent Ctrl-C) does not end it: for the daemon,
/// which outlives the conversation that started it.
pub fn detach_from_our_group(cmd: &mut std::process::Command) {
    use std::os::windows::process::CommandExt;
    use windows_sys::Win32::System::Threading::{CREATE_NEW_PROCESS_GROUP, DETACHED_PROCESS};
    cmd.creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP);
}

/// One instance of the pipe `name`, readable and writable by this user only, refusing
/// remote clients (also the `eval` kernels' channels, `child_channel`).
pub(crate) fn create_instance(name: &str, first: bool) -> io::Result<NamedPipeServer> {
    let sddl = format!("D:P(A;;GA;;;{})", this_user_sid_string()?);
    let wide: Vec<u16> = sddl.encode_utf16().chain(Some(0)).collect();
    let mut descriptor: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
    // SAFETY: `wide` is a NUL-terminated UTF-16 string; the descriptor is freed below.
    let ok = unsafe {
        ConvertStringSecurityDescriptorToSecurityDescriptorW(
            wide.as_ptr(),
            SDDL_REVISION_1,
            &mut descriptor,
            std::ptr::null_mut(),
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    let mut attributes = SECURITY_ATTRIBUTES {
        nLength: std::mem::size_of::<SECURITY_ATTRIBUTES>() as u32,
        lpSecurityDescriptor: descriptor,
        bInheritHandle: 0,
    };
    // SAFETY: `attributes` points to a valid descriptor for the duration of the call.
    let made = unsafe {
        ServerOptions::new()
            .first_pipe_instance(first)
            .reject_remote_clients(true)
            .create_with_security_attributes_raw(
                name,
                (&mut attributes as *mut SECURITY_ATTRIBUTES).cast(),
            )
    };
    // SAFETY: allocated by ConvertStringSecurityDescriptorToSecurityDescriptorW.
    unsafe { LocalFree(descriptor as _) };
    made
}

/// A process's user, as the bytes of its token's `TOKEN_USER` (the SID follows it).
struct TokenUserBuf(Vec<u64>);

impl TokenUserBuf {
    /// The user of the process `process` (a handle with query rights).
    fn of_process(process: HANDLE) -> io::Result<TokenUserBuf> {
        let mut token: HANDLE = std::ptr::null_mut();
        // SAFETY: `process` is a valid handle; `token` is closed below.
        if unsafe { OpenProcessToken(process, TOKEN_QUERY, &mut token) } == 0 {
            return Err(io::Error::last_os_error());
        }
        let mut len = 0u32;
        // SAFETY: asks for the size only.
        unsafe { GetTokenInformation(token, TokenUser, std::ptr::null_mut(), 0, &mut len) };
        let mut buf = vec![0u64; (len as usize).div_ceil(8).max(1)];
        // SAFETY: `buf` holds `len` bytes, aligned for TOKEN_USER.
        let ok = unsafe {
            GetTokenInformation(token, TokenUser, buf.as_mut_ptr().cast(), len, &mut len)
        };
        let err = io::Error::last_os_error();
        // SAFETY: opened above.
        unsafe { CloseHandle(token) };
        if ok == 0 {
            return Err(err);
        }
        Ok(TokenUserBuf(buf))
    }

    fn sid(&self) -> *mut core::ffi::c_void {
        // SAFETY: the buffer starts with a TOKEN_USER filled by GetTokenInformation.
        unsafe { (*(self.0.as_ptr() as *const TOKEN_USER)).User.Sid }
    }
}

/// This process's user's SID as text (`S-1-5-21-…`).
fn this_user_sid_string() -> io::Result<String> {
    // SAFETY: the pseudo-handle of this process needs no closing.
    let user = TokenUserBuf::of_process(unsafe { GetCurrentProcess() })?;
    let mut text: *mut u16 = std::ptr::null_mut();
    // SAFETY: the SID is valid while `user` lives; `text` is freed below.
    if unsafe { ConvertSidToStringSidW(user.sid(), &mut text) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a NUL-terminated UTF-16 string from ConvertSidToStringSidW.
    let s = unsafe {
        let len = (0..).take_while(|&i| *text.add(i) != 0).count();
        String::from_utf16_lossy(std::slice::from_raw_parts(text, len))
    };
    // SAFETY: allocated by ConvertSidToStringSidW.
    unsafe { LocalFree(text as _) };
    Ok(s)
}

/// The process id of the client at the other end of the connected `pipe`.
pub(crate) fn client_pid(pipe: &NamedPipeServer) -> io::Result<u32> {
    use std::os::windows::io::AsRawHandle;
    let mut pid = 0u32;
    // SAFETY: a connected pipe handle.
    if unsafe { GetNamedPipeClientProcessId(pipe.as_raw_handle() as HANDLE, &mut pid) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(pid)
}

/// Whether the process at the other end of `pipe` runs as this process's user.
fn client_is_this_user(pipe: &NamedPipeServer) -> io::Result<bool> {
    let pid = client_pid(pipe)?;
    // SAFETY: plain call; the handle is closed below.
    let process = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if process.is_null() {
        return Err(io::Error::last_os_error());
    }
    let theirs = TokenUserBuf::of_process(process);
    // SAFETY: opened above.
    unsafe { CloseHandle(process) };
    let theirs = theirs?;
    // SAFETY: the pseudo-handle of this process needs no closing.
    let ours = TokenUserBuf::of_process(unsafe { GetCurrentProcess() })?;
    // SAFETY: both SIDs are valid while their buffers live.
    Ok(unsafe { EqualSid(ours.sid(), theirs.sid()) } != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn a_connection_of_this_user_is_accepted_and_carries_bytes_both_ways() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("daemon-test.sock");
        let listener = LocalListener::bind(&path).unwrap();
        // Wine 8 does not enforce FILE_FLAG_FIRST_PIPE_INSTANCE; Windows does (the daemon's
        // lock file is what keeps one daemon per build either way).
        if !cfg!(wine) {
            assert!(
                LocalListener::bind(&path).is_err(),
                "a second daemon cannot listen on the same pipe"
            );
        }
        let accept = tokio::spawn(async move {
            let (mut stream, same_user) = listener.accept().await.unwrap();
            let mut buf = [0u8; 5];
            stream.read_exact(&mut buf).await.unwrap();
            stream.write_all(b"world").await.unwrap();
            (same_user, buf)
        });
        let mut client = connect_local(&path).await.unwrap();
        client.write_all(b"hello").await.unwrap();
        let mut answer = [0u8; 5];
        client.read_exact(&mut answer).await.unwrap();
        let (same_user, heard) = accept.await.unwrap();
        assert_eq!((same_user, &heard, &answer), (true, b"hello", b"world"));
    }
}
