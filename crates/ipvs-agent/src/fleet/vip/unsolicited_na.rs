//! Unsolicited neighbour advertisement (RFC 4861, 7.2.6): a leader that
//! has just added an IPv6 VIP tells the segment's nodes that the VIP is
//! now at its MAC, as [`garp`](crate::fleet::vip::garp) does for IPv4. The packet is
//! an IPv6 one from the VIP to all nodes (`ff02::1`), hop limit 255, an
//! ICMPv6 neighbour advertisement for the VIP with the override flag set
//! (solicited and router flags clear) and a target link-layer address
//! option carrying the interface's MAC; its checksum covers the IPv6
//! pseudo-header.
//!
//! It is sent whole through an `AF_PACKET` socket (`packet`) to
//! `33:33:00:00:00:01` (the Ethernet address of `ff02::1`), like the
//! gratuitous ARP, rather than through an ICMPv6 raw socket: the kernel's
//! IPv6 stack would choose the source address by its own rules and
//! refuses one that is still tentative, while the announcement must come
//! from the VIP the moment it is added; the packet socket needs the same
//! `CAP_NET_RAW` the ARP does, and passes no firewall's output chain.
//!
//! ```
//! use std::net::Ipv6Addr;
//! use ipvs_agent::fleet::vip::unsolicited_na::neighbour_advertisement;
//! let vip: Ipv6Addr = "2001:db8::10".parse().unwrap();
//! let p = neighbour_advertisement([2, 0, 0, 0, 0, 1], vip);
//! assert_eq!(p[0] >> 4, 6);            // IPv6
//! assert_eq!((p[6], p[7]), (58, 255)); // ICMPv6, hop limit 255
//! assert_eq!(p[40], 136);              // neighbour advertisement
//! assert_eq!(p[44], 0x20);             // override, not solicited, not a router
//! assert_eq!(&p[48..64], &vip.octets()); // for the VIP
//! assert_eq!(&p[64..72], &[2, 1, 2, 0, 0, 0, 0, 1]); // at this MAC
//! ```

use std::io;
use std::net::Ipv6Addr;

use crate::fleet::vip::packet;

/// `ETH_P_IPV6`.
const ETH_P_IPV6: u16 = 0x86dd;
/// All nodes on the link.
pub const ALL_NODES: Ipv6Addr = Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 1);
/// The Ethernet address of [`ALL_NODES`] (33:33 and its last 32 bits).
const ALL_NODES_MAC: [u8; 6] = [0x33, 0x33, 0, 0, 0, 1];
/// ICMPv6's next-header number.
const ICMPV6: u8 = 58;
/// The advertisement's length: 24 bytes, then an 8-byte option.
const NA_LEN: usize = 32;
/// The override flag (the first byte after the checksum).
const OVERRIDE: u8 = 0x20;

/// The IPv6 packet (72 bytes: header, advertisement, option) announcing
/// `vip` at `mac`.
pub fn neighbour_advertisement(mac: [u8; 6], vip: Ipv6Addr) -> [u8; 40 + NA_LEN] {
    let mut p = [0u8; 40 + NA_LEN];
    p[0] = 6 << 4; // version 6, traffic class and flow label zero
    p[4..6].copy_from_slice(&(NA_LEN as u16).to_be_bytes());
    p[6] = ICMPV6;
    p[7] = 255; // hop limit: RFC 4861 receivers drop anything less
    p[8..24].copy_from_slice(&vip.octets());
    p[24..40].copy_from_slice(&ALL_NODES.octets());
    let na = &mut p[40..];
    na[0] = 136; // neighbour advertisement, code 0
    na[4] = OVERRIDE;
    na[8..24].copy_from_slice(&vip.octets());
    na[24] = 2; // target link-layer address
    na[25] = 1; // in units of 8 bytes
    na[26..32].copy_from_slice(&mac);
    let sum = icmpv6_checksum(vip, ALL_NODES, na);
    na[2..4].copy_from_slice(&sum.to_be_bytes());
    p
}

/// The ICMPv6 checksum of `message` (its checksum field zero) from `src`
/// to `dst`: the ones' complement of the ones' complement sum of the
/// pseudo-header (both addresses, the length as 32 bits, three zero bytes
/// and the next header 58) and the message.
///
/// ```
/// use std::net::Ipv6Addr;
/// use ipvs_agent::fleet::vip::unsolicited_na::{icmpv6_checksum, neighbour_advertisement, ALL_NODES};
/// let vip: Ipv6Addr = "2001:db8::10".parse().unwrap();
/// let p = neighbour_advertisement([2, 0, 0, 0, 0, 1], vip);
/// // Summed with its checksum in place, a message checks to zero.
/// let mut with_sum = p[40..].to_vec();
/// assert_eq!(icmpv6_checksum(vip, ALL_NODES, &with_sum), 0);
/// with_sum[30] ^= 1;
/// assert_ne!(icmpv6_checksum(vip, ALL_NODES, &with_sum), 0);
/// ```
pub fn icmpv6_checksum(src: Ipv6Addr, dst: Ipv6Addr, message: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    let mut add = |bytes: &[u8]| {
        for pair in bytes.chunks(2) {
            let hi = u32::from(pair[0]) << 8;
            let lo = pair.get(1).copied().map_or(0, u32::from);
            sum += hi | lo;
        }
    };
    add(&src.octets());
    add(&dst.octets());
    add(&(message.len() as u32).to_be_bytes());
    add(&[0, 0, 0, ICMPV6]);
    add(message);
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Sends the advertisement of `vip` at `mac` to all nodes on the
/// interface of index `ifindex`. Needs `CAP_NET_RAW`.
pub fn announce(ifindex: u32, mac: [u8; 6], vip: Ipv6Addr) -> io::Result<()> {
    let packet = neighbour_advertisement(mac, vip);
    packet::send_frame(ifindex, ETH_P_IPV6, ALL_NODES_MAC, &packet)
}
