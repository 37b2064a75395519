//! A netlink socket of a client, and how it is opened (in another
//! network namespace: [`super::netns::Sockets`]).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::time::Duration;

use netlink_sys::{protocols::NETLINK_GENERIC, Socket, SocketAddr};

/// The most datagrams [`NlSocket::recv_many`] takes in one call.
const MAX_DATAGRAMS: usize = 4;

/// A connected generic-netlink socket.
#[derive(Debug)]
pub(crate) struct NlSocket {
    sock: Socket,
    /// The receive timeout set on the socket (so it is set only when it
    /// changes).
    timeout: Option<Duration>,
}

/// One datagram of a [`NlSocket::recv_many`]: its length, and whether it
/// was larger than its segment (then only the segment's worth is there).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Received {
    pub len: usize,
    pub truncated: bool,
}

impl NlSocket {
    /// Opens a socket in the calling thread's network namespace.
    pub(crate) fn open() -> io::Result<Self> {
        let mut sock = Socket::new(NETLINK_GENERIC)?;
        sock.bind_auto()?;
        sock.connect(&SocketAddr::new(0, 0))?;
        // Error replies carry only the request's header, not the request:
        // a failed batch then costs a few bytes per failure.
        let _ = sock.set_cap_ack(true);
        Ok(NlSocket {
            sock,
            timeout: None,
        })
    }

    /// Sets the receive timeout, so that no call waits forever (a system
    /// call only when it differs from the one in force).
    pub(crate) fn set_timeout(&mut self, timeout: Duration) -> io::Result<()> {
        if self.timeout == Some(timeout) {
            return Ok(());
        }
        // Unknown until the call succeeds.
        self.timeout = None;
        let tv = libc::timeval {
            tv_sec: timeout.as_secs().min(i64::MAX as u64) as libc::time_t,
            tv_usec: timeout.subsec_micros() as libc::suseconds_t,
        };
        setsockopt(&self.sock, libc::SOL_SOCKET, libc::SO_RCVTIMEO, &tv)?;
        self.timeout = Some(timeout);
        Ok(())
    }

    /// The receive timeout in force, as last set.
    #[cfg(test)]
    pub(crate) fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Makes every call on the socket return `EAGAIN` instead of waiting
    /// (for a driver that waits on readiness instead).
    #[cfg(feature = "tokio")]
    pub(crate) fn set_non_blocking(&self) -> io::Result<()> {
        self.sock.set_non_blocking(true)
    }

    /// Sets the receive buffer; tries the privileged variant first so the
    /// size is not capped by `net.core.rmem_max`. Returns the size in force.
    pub(crate) fn set_receive_buffer(&self, bytes: usize) -> io::Result<usize> {
        let v = bytes.min(i32::MAX as usize / 2) as libc::c_int;
        if setsockopt(&self.sock, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &v).is_err() {
            setsockopt(&self.sock, libc::SOL_SOCKET, libc::SO_RCVBUF, &v)?;
        }
        self.sock.get_rx_buf_sz()
    }

    /// Sends one datagram (any number of requests).
    pub(crate) fn send(&self, buf: &[u8]) -> io::Result<()> {
        let sent = self.sock.send(buf, 0)?;
        if sent != buf.len() {
            return Err(io::Error::other(format!(
                "short netlink send: {sent} of {} bytes",
                buf.len()
            )));
        }
        Ok(())
    }

    /// Receives up to `got.len()` datagrams (at most [`MAX_DATAGRAMS`]) in
    /// one `recvmmsg`, the i-th into the i-th `segment` bytes of `buf`,
    /// waiting (unless `dont_wait`) only for the first: those already
    /// queued come with it. A dump's next part is made as its previous one
    /// is read, so one call takes a short dump's data and its `NLMSG_DONE`
    /// together. Returns how many came, each described in `got`.
    pub(crate) fn recv_many(
        &self,
        buf: &mut [u8],
        segment: usize,
        got: &mut [Received],
        dont_wait: bool,
    ) -> io::Result<usize> {
        let lens = got;
        let mut iovs: [libc::iovec; MAX_DATAGRAMS] = [libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        }; MAX_DATAGRAMS];
        let mut slots = 0;
        for (iov, part) in iovs.iter_mut().zip(buf.chunks_exact_mut(segment.max(1))) {
            if slots == lens.len() {
                break;
            }
            iov.iov_base = part.as_mut_ptr().cast();
            iov.iov_len = part.len();
            slots += 1;
        }
        if slots == 0 {
            return Err(io::Error::other("no receive buffer"));
        }
        // SAFETY: an all-zero mmsghdr is a valid value (null pointers, zero
        // lengths); each one used is then pointed at one iovec above.
        let mut headers: [libc::mmsghdr; MAX_DATAGRAMS] = unsafe { std::mem::zeroed() };
        for (h, iov) in headers.iter_mut().zip(iovs.iter_mut()).take(slots) {
            h.msg_hdr.msg_iov = iov;
            h.msg_hdr.msg_iovlen = 1;
        }
        let flags =
            libc::MSG_WAITFORONE | libc::MSG_TRUNC | if dont_wait { libc::MSG_DONTWAIT } else { 0 };
        // SAFETY: `headers[..slots]` each point at one iovec of `iovs`, which
        // points at a distinct, live part of `buf`; all outlive the call, and
        // the kernel writes at most `iov_len` bytes into each. The
        // descriptor is owned by `self.sock`. A null timeout: the socket's
        // receive timeout bounds the wait for the first datagram.
        let n = unsafe {
            libc::recvmmsg(
                self.sock.as_raw_fd(),
                headers.as_mut_ptr(),
                slots as libc::c_uint,
                flags as _,
                std::ptr::null_mut(),
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = (n as usize).min(slots);
        for (r, h) in lens.iter_mut().zip(&headers[..n]) {
            // With MSG_TRUNC the length is the datagram's own, even when
            // it was larger than the segment.
            let len = h.msg_len as usize;
            *r = Received {
                len,
                truncated: len > segment || h.msg_hdr.msg_flags & libc::MSG_TRUNC != 0,
            };
        }
        Ok(n)
    }
}

impl AsRawFd for NlSocket {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.sock.as_raw_fd()
    }
}

pub(crate) fn enter_netns(file: &File) -> io::Result<()> {
    // SAFETY: setns takes a valid open descriptor (owned by `file`, alive for
    // the call) and a namespace type; it changes only the calling thread.
    let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn setsockopt<T>(sock: &Socket, level: i32, name: i32, value: &T) -> io::Result<()> {
    // SAFETY: `value` points to a live T of the given size for the duration
    // of the call; the kernel only reads it. The descriptor is owned by
    // `sock`, which outlives the call.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            level,
            name,
            value as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
