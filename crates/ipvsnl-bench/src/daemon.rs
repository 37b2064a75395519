//! Stopping a daemon the benches started (ipvs-agent, keepalived).

use std::process::Child;

/// SIGTERM and wait: keepalived stops its checker child then (a SIGKILL
/// would leave the child checking on).
pub fn stop(child: &mut Child) {
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill(2) with our own child's pid and a signal number.
        unsafe { libc::kill(pid, libc::SIGTERM) };
    }
    let _ = child.wait();
}
