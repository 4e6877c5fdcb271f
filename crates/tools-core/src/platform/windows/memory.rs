//! This process's memory on Windows: its working set, and the process heap compacted.

use windows_sys::Win32::System::Memory::{GetProcessHeap, HeapCompact};
use windows_sys::Win32::System::ProcessStatus::{K32GetProcessMemoryInfo, PROCESS_MEMORY_COUNTERS};
use windows_sys::Win32::System::Threading::GetCurrentProcess;

/// This process's resident memory in bytes (its working set); `None` if the system does
/// not answer.
pub fn resident_bytes() -> Option<u64> {
    let mut counters = PROCESS_MEMORY_COUNTERS::default();
    let size = u32::try_from(std::mem::size_of::<PROCESS_MEMORY_COUNTERS>()).ok()?;
    // SAFETY: the pseudo-handle of this process needs no closing; `counters` is a valid
    // out-buffer of the size given.
    let ok = unsafe { K32GetProcessMemoryInfo(GetCurrentProcess(), &raw mut counters, size) };
    if ok == 0 {
        return None;
    }
    u64::try_from(counters.WorkingSetSize).ok()
}

/// Hands memory this process freed back to the system: Rust's allocator takes its memory
/// from the process heap, whose large free blocks `HeapCompact` decommits.
pub fn return_freed_memory() {
    // SAFETY: the process heap handle is valid for the life of the process; HeapCompact
    // takes the heap's own lock and no pointer from us.
    unsafe {
        HeapCompact(GetProcessHeap(), 0);
    }
}
