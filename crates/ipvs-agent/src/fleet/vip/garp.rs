//! Gratuitous ARP: a leader that has just added an IPv4 VIP tells the
//! segment, so that neighbours (routers, clients) send to its MAC at once
//! instead of the old leader's. The announcement is an ARP request for the
//! VIP from the VIP (sender and target address both the VIP, sender MAC
//! the interface's), broadcast through an `AF_PACKET` socket (`packet`).
//!
//! ```
//! use std::net::Ipv4Addr;
//! use ipvs_agent::fleet::vip::garp::arp_announcement;
//! let frame = arp_announcement([2, 0, 0, 0, 0, 1], Ipv4Addr::new(192, 0, 2, 10));
//! assert_eq!(&frame[..8], &[0, 1, 8, 0, 6, 4, 0, 1]); // Ethernet, IPv4, request
//! assert_eq!(&frame[14..18], &[192, 0, 2, 10]);       // from the VIP
//! assert_eq!(&frame[24..28], &[192, 0, 2, 10]);       // for the VIP
//! ```

use std::io;
use std::net::Ipv4Addr;

use crate::fleet::vip::packet;

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
    packet::send_frame(ifindex, ETH_P_ARP, BROADCAST, &arp_announcement(mac, vip))
}
