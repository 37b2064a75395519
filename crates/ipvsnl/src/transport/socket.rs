//! The one netlink socket of a client, and how it is opened (optionally in
//! another network namespace).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::Duration;

use netlink_sys::{protocols::NETLINK_GENERIC, Socket, SocketAddr};

use crate::Error;

/// A connected generic-netlink socket.
#[derive(Debug)]
pub(crate) struct NlSocket {
    sock: Socket,
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
        Ok(NlSocket { sock })
    }

    /// Opens a socket in the network namespace of `path` (e.g.
    /// `/var/run/netns/NAME` or `/proc/PID/ns/net`).
    ///
    /// A socket belongs to the namespace it was created in, for its whole
    /// life. So a short-lived thread enters the namespace, creates the
    /// socket and ends: no other thread of the caller ever moves.
    pub(crate) fn open_in(path: &Path) -> Result<Self, Error> {
        let ns_error = |source| Error::Namespace {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(ns_error)?;
        let opened = std::thread::scope(|s| {
            s.spawn(|| -> io::Result<NlSocket> {
                enter_netns(&file)?;
                NlSocket::open()
            })
            .join()
        });
        match opened {
            Ok(result) => result.map_err(ns_error),
            Err(_) => Err(ns_error(io::Error::other("namespace thread panicked"))),
        }
    }

    /// Sets the receive timeout, so that no call waits forever.
    pub(crate) fn set_timeout(&self, timeout: Duration) -> io::Result<()> {
        let tv = libc::timeval {
            tv_sec: timeout.as_secs().min(i64::MAX as u64) as libc::time_t,
            tv_usec: timeout.subsec_micros() as libc::suseconds_t,
        };
        setsockopt(&self.sock, libc::SOL_SOCKET, libc::SO_RCVTIMEO, &tv)
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

    /// Receives one datagram into `buf`, returning its length. A datagram
    /// larger than `buf` is an error (it would have been truncated).
    pub(crate) fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        let cap = buf.len();
        let n = self.sock.recv(&mut &mut buf[..], libc::MSG_TRUNC)?;
        if n > cap {
            return Err(io::Error::other(format!(
                "netlink datagram of {n} bytes exceeds the {cap}-byte receive buffer"
            )));
        }
        Ok(n)
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
