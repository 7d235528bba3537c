//! A counting allocator for the tests that measure what a reader holds: the system
//! allocator, counting the bytes allocated now and their peak. A test file that includes this
//! module makes it its global allocator (`crates/trace/tests/hostile.rs`,
//! `crates/analysis/tests/hostile.rs`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The system allocator, counting the bytes allocated now and their peak.
struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = NOW.fetch_add(layout.size(), Relaxed) + layout.size();
            PEAK.fetch_max(now, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        NOW.fetch_sub(layout.size(), Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let now = NOW.fetch_add(new_size - layout.size(), Relaxed) + new_size - layout.size();
                PEAK.fetch_max(now, Relaxed);
            } else {
                NOW.fetch_sub(layout.size() - new_size, Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Taken by each measuring test, so that each measures only its own reading.
pub static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// `f`'s result, the most bytes it held allocated at once beyond what was allocated before,
/// and its time.
pub fn measured<T>(f: impl FnOnce() -> T) -> (T, usize, Duration) {
    let before = NOW.load(Relaxed);
    PEAK.store(before, Relaxed);
    let t = Instant::now();
    let r = f();
    let took = t.elapsed();
    let held = PEAK.load(Relaxed).saturating_sub(before);
    eprintln!("held at most {held} bytes, for {took:?}");
    (r, held, took)
}
