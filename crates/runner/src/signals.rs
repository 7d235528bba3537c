//! SIGINT, SIGTERM and SIGHUP set a flag; the campaign loop sees it, stops the jobs' process
//! groups and tears down what it set up. The handler does nothing else (async-signal-safe).

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    SIGNAL.store(sig, Ordering::SeqCst);
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Installs the handlers (idempotent). Jobs are spawned in their own process groups, so a
/// terminal's Ctrl-C reaches only the runner, which then stops them in order.
pub(crate) fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: sigaction with a handler that only stores into atomics.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = on_signal as *const () as usize;
            act.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut act.sa_mask);
            libc::sigaction(sig, &act, std::ptr::null_mut());
        }
    }
}

/// Whether a stop signal arrived.
pub(crate) fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// The signal that arrived, if any (for the exit status 128 + N).
pub(crate) fn signal() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// What the progress and the summary say of a stop signal: `interrupted by signal N`.
pub(crate) fn interrupt_text() -> String {
    match signal() {
        Some(s) => format!("interrupted by signal {s}"),
        None => "interrupted".into(),
    }
}
