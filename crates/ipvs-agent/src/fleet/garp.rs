//! Gratuitous ARP: a leader that has just added an IPv4 VIP tells the
//! segment, so that neighbours (routers, clients) send to its MAC at once
//! instead of the old leader's. The announcement is an ARP request for the
//! VIP from the VIP (sender and target address both the VIP, sender MAC
//! the interface's), broadcast through an `AF_PACKET` socket.
//!
//! ```
//! use std::net::Ipv4Addr;
//! use ipvs_agent::fleet::garp::arp_announcement;
//! let frame = arp_announcement([2, 0, 0, 0, 0, 1], Ipv4Addr::new(192, 0, 2, 10));
//! assert_eq!(&frame[..8], &[0, 1, 8, 0, 6, 4, 0, 1]); // Ethernet, IPv4, request
//! assert_eq!(&frame[14..18], &[192, 0, 2, 10]);       // from the VIP
//! assert_eq!(&frame[24..28], &[192, 0, 2, 10]);       // for the VIP
//! ```

use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{FromRawFd, OwnedFd};

/// `ETH_P_ARP`.
const ETH_P_ARP: u16 = 0x0806;
/// The Ethernet broadcast address.
const BROADCAST: [u8; 6] = [0xff; 6];

/// The ARP payload (28 bytes) announcing `vip` at `mac`: hardware type
/// Ethernet, protocol IPv4, operation request, sender `mac`/`vip`, target
/// hardware address zero, target address `vip`.
pub fn arp_announcement(mac: [u8; 6], vip: Ipv4Addr) -> [u8; 28] {
    let mut p = [0u8; 28];
    p[0..2].copy_from_slice(&1u16.to_be_bytes()); // ARPHRD_ETHER
    p[2..4].copy_from_slice(&0x0800u16.to_be_bytes()); // ETH_P_IP
    p[4] = 6;
    p[5] = 4;
    p[6..8].copy_from_slice(&1u16.to_be_bytes()); // ARPOP_REQUEST
    p[8..14].copy_from_slice(&mac);
    p[14..18].copy_from_slice(&vip.octets());
    p[24..28].copy_from_slice(&vip.octets());
    p
}

/// Broadcasts the announcement of `vip` at `mac` on the interface of
/// index `ifindex` (the kernel adds the Ethernet header: from the
/// interface's MAC, to broadcast, type ARP). Needs `CAP_NET_RAW`.
pub fn announce(ifindex: u32, mac: [u8; 6], vip: Ipv4Addr) -> io::Result<()> {
    let socket = packet_socket()?;
    let payload = arp_announcement(mac, vip);
    send_to(&socket, ifindex, &payload)
}

/// An `AF_PACKET` datagram socket for ARP frames.
fn packet_socket() -> io::Result<OwnedFd> {
    // SAFETY: socket(2) takes no pointers; a negative result is an error
    // reported through errno.
    let fd = unsafe {
        libc::socket(
            libc::AF_PACKET,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            i32::from(ETH_P_ARP.to_be()),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a descriptor socket(2) just returned, owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Sends `payload` to the broadcast address on interface `ifindex`.
fn send_to(socket: &OwnedFd, ifindex: u32, payload: &[u8]) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let mut addr: libc::sockaddr_ll = sockaddr_ll_zeroed();
    addr.sll_family = libc::AF_PACKET as u16;
    addr.sll_protocol = ETH_P_ARP.to_be();
    addr.sll_ifindex = i32::try_from(ifindex)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "interface index too large"))?;
    addr.sll_halen = 6;
    addr.sll_addr[..6].copy_from_slice(&BROADCAST);
    // SAFETY: `payload` and `addr` are valid for the lengths passed and
    // outlive the call; the descriptor is open (borrowed from `socket`).
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
