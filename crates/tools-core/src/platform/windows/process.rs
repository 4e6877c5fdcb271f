//! Child process trees on Windows: each child is put in a Job Object of its own with
//! kill-on-close, so ending the job ends every process the child started (they join the
//! job with it), and the system ends the whole tree when this process dies, however it
//! dies (closing our last handle to the job is what kill-on-close reacts to).
//!
//! Known gap: the child is assigned to its job right after it starts, so a process it
//! starts in its very first instants may escape the job.

use std::collections::HashMap;
use std::io;
use std::sync::Mutex;

use crate::platform::Forked;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JobObjectBasicAccountingInformation, JobObjectExtendedLimitInformation,
    QueryInformationJobObject, SetInformationJobObject, TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{OpenProcess, PROCESS_TERMINATE, TerminateProcess};

/// A Job Object handle, closed (and so its processes killed) on drop.
struct Job(HANDLE);

// SAFETY: a job handle may be used and closed from any thread.
unsafe impl Send for Job {}

impl Drop for Job {
    fn drop(&mut self) {
        // SAFETY: the handle was returned by CreateJobObjectW and is closed only here.
        unsafe {
            CloseHandle(self.0);
        }
    }
}

/// The job of every live child tree, by the child's pid (the id the rest of the crate uses
/// as its "group").
static JOBS: Mutex<Option<HashMap<i32, Job>>> = Mutex::new(None);

fn new_kill_on_close_job() -> io::Result<Job> {
    // SAFETY: null attributes and name ask for an anonymous job with default security.
    let handle = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
    if handle.is_null() {
        return Err(io::Error::last_os_error());
    }
    let job = Job(handle);
    let mut info = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
    info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    // SAFETY: `info` is a valid JOBOBJECT_EXTENDED_LIMIT_INFORMATION of the size given.
    let ok = unsafe {
        SetInformationJobObject(
            job.0,
            JobObjectExtendedLimitInformation,
            (&raw const info).cast(),
            std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(job)
}

/// Windows has no sessions to start a child in; its tree is tied to a job once it runs
/// ([`tree_started`]).
pub(crate) fn own_tree_dying_with_us(_cmd: &mut tokio::process::Command) {}

/// Puts the child in a kill-on-close Job Object of its own.
pub(crate) fn tree_started(child: &tokio::process::Child) -> io::Result<()> {
    let (Some(pid), Some(process)) = (child.id(), child.raw_handle()) else {
        return Ok(());
    };
    let job = new_kill_on_close_job()?;
    // SAFETY: both handles are valid: the job was just made, the process is our child.
    if unsafe { AssignProcessToJobObject(job.0, process as HANDLE) } == 0 {
        return Err(io::Error::last_os_error());
    }
    if let Ok(mut jobs) = JOBS.lock() {
        jobs.get_or_insert_with(HashMap::new)
            .insert(pid as i32, job);
    }
    Ok(())
}

/// Closes the job of a tree its owner forgot, which kills what is left of it.
pub(crate) fn tree_forgotten(pgid: i32) {
    if let Ok(mut jobs) = JOBS.lock()
        && let Some(jobs) = jobs.as_mut()
    {
        jobs.remove(&pgid);
    }
}

/// Ends every process in the job of the child `pgid`. Harmless if it is gone.
pub(crate) fn kill_group(pgid: i32) {
    if let Ok(jobs) = JOBS.lock()
        && let Some(job) = jobs.as_ref().and_then(|j| j.get(&pgid))
    {
        // SAFETY: a valid job handle.
        unsafe {
            TerminateJobObject(job.0, 1);
        }
    }
}

/// Unix signals do not exist on Windows: a tree can be ended ([`kill_group`]), not
/// interrupted or asked to terminate.
pub(crate) fn signal_group(_pgid: i32, signal: i32) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        format!("sending signal {signal} to a process tree is not supported on Windows"),
    ))
}

/// Windows has no polite "please stop" for a process tree without a console of its own:
/// the caller's grace period passes and the tree is then ended.
pub(crate) fn ask_group_to_stop(_pgid: i32) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "asking a process tree to stop is not supported on Windows; it is ended after the grace period",
    ))
}

/// The signal that ended a process: never one on Windows, where there are no signals.
pub fn exit_signal(_status: &std::process::ExitStatus) -> Option<i32> {
    None
}

/// What a signal means: never asked on Windows ([`exit_signal`] is always `None`).
pub fn signal_meaning(_sig: i32) -> Option<&'static str> {
    None
}

/// Whether any process of the job of the child `pgid` still runs.
pub(crate) fn group_alive(pgid: i32) -> bool {
    active_processes(pgid).is_some_and(|n| n > 0)
}

/// How many processes of the child `pgid`'s job are alive; `None` when it has no job here
/// or the job cannot be asked.
fn active_processes(pgid: i32) -> Option<u32> {
    let jobs = JOBS.lock().ok()?;
    let job = jobs.as_ref().and_then(|j| j.get(&pgid))?;
    let mut info = JOBOBJECT_BASIC_ACCOUNTING_INFORMATION::default();
    // SAFETY: `info` is a valid out-buffer of the size given.
    let ok = unsafe {
        QueryInformationJobObject(
            job.0,
            JobObjectBasicAccountingInformation,
            (&raw mut info).cast(),
            std::mem::size_of::<JOBOBJECT_BASIC_ACCOUNTING_INFORMATION>() as u32,
            std::ptr::null_mut(),
        )
    };
    (ok != 0).then_some(info.ActiveProcesses)
}

/// Ending one process by pid outside its job is not needed here: every tree is ended
/// through its job. The sweep never gets here, since the process listing is unsupported.
pub(crate) fn kill_process(_pid: i32) {}

/// Exited children are reaped by their handles on Windows.
pub(crate) fn reap_exited(_pid: i32) {}

/// Ends this process at once, as a crash would.
pub(crate) fn kill_self_now() {
    std::process::abort();
}

/// On Windows the jobs already give the watchdog's guarantee.
pub(crate) fn fork_watchdog() -> io::Result<Forked> {
    Ok(Forked::NotNeeded)
}

/// Never called on Windows (no watchdog is started).
pub(crate) fn stdin_as_file() -> io::Result<std::fs::File> {
    Err(io::Error::other("no watchdog runs on Windows"))
}

/// On Windows the jobs already give the watchdog's guarantee: every child tree is in a
/// kill-on-close Job Object, which the system ends when this process dies. None is started.
pub(crate) fn spawn_watchdog(
    _program: &std::path::Path,
    _arg: &str,
) -> io::Result<Option<(i32, std::fs::File)>> {
    Ok(None)
}

/// Never called on Windows (no watchdog is started).
pub(crate) fn detach_watchdog() {}

/// Never called on Windows (no watchdog is started).
pub(crate) fn exit_watchdog() -> ! {
    std::process::exit(0)
}

/// Ends the process `pid` for good (a debuggee that outlived its adapter). Windows has no
/// process groups to end with it. A pid that is gone is left alone.
pub fn kill_leftover(pid: i32) {
    let Ok(pid) = u32::try_from(pid) else { return };
    // SAFETY: OpenProcess takes plain values; a null answer means no such process.
    let process = unsafe { OpenProcess(PROCESS_TERMINATE, 0, pid) };
    if process.is_null() {
        return;
    }
    // SAFETY: `process` is a valid handle with terminate access, closed right after.
    unsafe {
        TerminateProcess(process, 1);
        CloseHandle(process);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::time::{Duration, Instant};

    /// Waits up to five seconds for `done`.
    fn eventually(mut done: impl FnMut() -> bool) -> bool {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            if done() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// A child that starts a grandchild, both waiting on the same open stdin for ever.
    fn tree() -> (tokio::process::Child, i32) {
        let mut cmd = tokio::process::Command::new("cmd");
        cmd.args(["/Q", "/C", "cmd /Q /K"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null());
        own_tree_dying_with_us(&mut cmd);
        let child = cmd.spawn().unwrap();
        tree_started(&child).unwrap();
        let pid = child.id().unwrap() as i32;
        (child, pid)
    }

    #[tokio::test]
    async fn a_child_tree_lives_in_its_job_and_is_ended_with_it() {
        let (mut child, pid) = tree();
        assert!(
            eventually(|| active_processes(pid).expect("the child's job answers") == 2),
            "the grandchild did not join the job: {} processes",
            active_processes(pid).expect("the child's job answers")
        );
        assert!(group_alive(pid));
        kill_group(pid);
        let status = tokio::time::timeout(Duration::from_secs(5), child.wait())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(status.code(), Some(1), "ended by the job's exit code");
        assert!(
            eventually(|| !group_alive(pid)),
            "the grandchild outlived the job"
        );
        assert_eq!(active_processes(pid).expect("the child's job answers"), 0);
        tree_forgotten(pid);
        assert!(!group_alive(pid), "a forgotten tree has no job left");
    }

    #[tokio::test]
    async fn a_forgotten_tree_is_ended_when_its_job_is_closed() {
        let (mut child, pid) = tree();
        assert!(eventually(|| active_processes(pid)
            .expect("the child's job answers")
            == 2));
        // Closing the last handle to a kill-on-close job is what ends the tree when this
        // process dies, however it dies.
        // Without the job's end the tree would wait on its open stdin for ever.
        tree_forgotten(pid);
        tokio::time::timeout(Duration::from_secs(5), child.wait())
            .await
            .expect("the tree outlived its closed job")
            .unwrap();
    }
}
