//! The client's memory: live heap bytes from a counting global allocator,
//! and the kernel's view of the process (`VmRSS`, `VmHWM`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

/// Counts the bytes allocated and not yet freed, on top of the system
/// allocator.
pub(crate) struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: defers every call to the system allocator; only adds counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is passed on unchanged.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract is passed on unchanged.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_add(
                new_size as isize - layout.size() as isize,
                Ordering::Relaxed,
            );
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// One reading of the process's memory.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Memory {
    /// Live heap bytes (allocated, not freed).
    pub(crate) heap: i64,
    /// Resident set size, KiB (`VmRSS`).
    pub(crate) rss_kib: u64,
    /// Peak resident set size so far, KiB (`VmHWM`).
    pub(crate) hwm_kib: u64,
}

/// Reads the live heap and `/proc/self/status` now (0 for a field the
/// kernel did not give).
pub(crate) fn now() -> Memory {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| -> u64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    Memory {
        heap: LIVE.load(Ordering::Relaxed) as i64,
        rss_kib: field("VmRSS:"),
        hwm_kib: field("VmHWM:"),
    }
}
