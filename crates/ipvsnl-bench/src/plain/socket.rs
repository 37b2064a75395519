//! The plain client's socket: a raw generic-netlink socket, bound and
//! connected to the kernel.

use std::io;

/// A raw generic-netlink socket in the caller's network namespace.
pub fn open() -> io::Result<netlink_sys::Socket> {
    let mut sock = netlink_sys::Socket::new(netlink_sys::protocols::NETLINK_GENERIC)?;
    sock.bind_auto()?;
    sock.connect(&netlink_sys::SocketAddr::new(0, 0))?;
    Ok(sock)
}
