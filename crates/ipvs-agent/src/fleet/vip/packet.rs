//! One link-layer frame sent on an interface through an `AF_PACKET`
//! datagram socket (the kernel writes the Ethernet header: from the
//! interface's MAC, to the address given, of the protocol given): how
//! [`garp`](crate::fleet::vip::garp) and [`unsolicited_na`](crate::fleet::vip::unsolicited_na)
//! announce a VIP. Needs `CAP_NET_RAW`.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Sends `payload` as one frame of EtherType `protocol` to the link-layer
/// address `to` on the interface of index `ifindex`.
pub(crate) fn send_frame(
    ifindex: u32,
    protocol: u16,
    to: [u8; 6],
    payload: &[u8],
) -> io::Result<()> {
    let socket = packet_socket(protocol)?;
    let mut addr = sockaddr_ll_zeroed();
    addr.sll_family = libc::AF_PACKET as u16;
    addr.sll_protocol = protocol.to_be();
    addr.sll_ifindex = i32::try_from(ifindex)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "interface index too large"))?;
    addr.sll_halen = 6;
    addr.sll_addr[..6].copy_from_slice(&to);
    // SAFETY: `payload` and `addr` are valid for the lengths passed and
    // outlive the call; the descriptor is open (owned by `socket`).
    let sent = unsafe {
        libc::sendto(
            socket.as_raw_fd(),
            payload.as_ptr().cast(),
            payload.len(),
            0,
            (&addr as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    if sent < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// An `AF_PACKET` datagram socket for frames of EtherType `protocol`.
fn packet_socket(protocol: u16) -> io::Result<OwnedFd> {
    // SAFETY: socket(2) takes no pointers; a negative result is an error
    // reported through errno.
    let fd = unsafe {
        libc::socket(
            libc::AF_PACKET,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            i32::from(protocol.to_be()),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a descriptor socket(2) just returned, owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn sockaddr_ll_zeroed() -> libc::sockaddr_ll {
    libc::sockaddr_ll {
        sll_family: 0,
        sll_protocol: 0,
        sll_ifindex: 0,
        sll_hatype: 0,
        sll_pkttype: 0,
        sll_halen: 0,
        sll_addr: [0; 8],
    }
}
