//! The memory figure: a counting allocator, on only while the desired
//! state and the plan from empty are built.

use super::*;

/// Counts live heap bytes and their peak while [`COUNTING`] is on (only
/// for the memory figure, so the timed runs pay nothing for it).
pub(crate) struct Counting;

pub(crate) static COUNTING: AtomicBool = AtomicBool::new(false);
pub(crate) static LIVE: AtomicIsize = AtomicIsize::new(0);
pub(crate) static PEAK: AtomicIsize = AtomicIsize::new(0);

// SAFETY: defers to the system allocator; only adds bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: AllocLayout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() && COUNTING.load(Ordering::Relaxed) {
            let size = layout.size() as isize;
            let now = LIVE.fetch_add(size, Ordering::Relaxed) + size;
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: AllocLayout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) };
        if COUNTING.load(Ordering::Relaxed) {
            LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        }
    }
}

#[global_allocator]
pub(crate) static GLOBAL: Counting = Counting;

impl Bench {
    pub(crate) fn memory(&mut self) {
        LIVE.store(0, Ordering::Relaxed);
        PEAK.store(0, Ordering::Relaxed);
        COUNTING.store(true, Ordering::Relaxed);
        let want = desired(Layout::Spread, 10_000, 5);
        let after_desired = LIVE.load(Ordering::Relaxed);
        let p = plan_from_empty(&want);
        let peak = PEAK.load(Ordering::Relaxed);
        let requests = p.len();
        drop(p);
        drop(want);
        COUNTING.store(false, Ordering::Relaxed);
        let mib = |b: isize| b as f64 / (1 << 20) as f64;
        self.memory_peak = Some(mib(peak));
        self.checks.push(format!(
            "- memory, 10000 x 5: desired state {:.1} MiB, desired + plan from empty ({requests} requests) peak {:.1} MiB (target: under 32 MiB)",
            mib(after_desired),
            mib(peak)
        ));
    }
}
