//! Waiting for a socket to be readable.

use std::os::fd::AsRawFd;
use std::time::Duration;

/// Waits up to `timeout` for `fd` to be readable; true if it is.
pub(crate) fn readable(fd: &impl AsRawFd, timeout: Duration) -> bool {
    let mut pfd = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
    // SAFETY: one valid pollfd, for the duration of the call.
    unsafe { libc::poll(&mut pfd, 1, ms) > 0 }
}
