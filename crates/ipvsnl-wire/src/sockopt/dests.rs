//! `IP_VS_SO_GET_DESTS`: the destinations of one IPv4 service
//! (`struct ip_vs_get_dests`, then `struct ip_vs_dest_entry` each).
//!
//! What the kernel does with it (`__ip_vs_get_dest_entries`, the same on
//! 6.1 and 6.12), under its IPVS mutex, so the entries are one consistent
//! copy of that service's list:
//!
//! - The service is looked up as an IPv4 one only, by its mark if the
//!   argument's `fwmark` is not 0, else by protocol, address and port:
//!   none found (an IPv6 service, or one deleted) is `ESRCH`.
//! - The argument's length must be exactly that of its `num_dests`
//!   entries (`EINVAL` otherwise, and a line in the kernel's log).
//! - Entries are filled from the first, newest destination first (the
//!   order of a netlink dump), at most `num_dests` of them; the rest of the
//!   buffer is left as it was, and how many were filled is not said.
//!   [`dests_request`] marks every entry empty (a weight of `u32::MAX`,
//!   which no destination has: the kernel refuses a negative weight), so
//!   [`SockoptDests`] ends at the first entry left so.
//! - A destination of the other address family (an IPv6 one of an IPv4
//!   service) is skipped, silently: fewer entries than the service's
//!   `num_dests` (of `IP_VS_SO_GET_SERVICES`) says one may be there.
//! - An entry has no tunnel type, port or flags: `conn_flags` says only
//!   that a destination is tunnelled ([`IP_VS_CONN_F_TUNNEL`]), not how.
//!   Its connection and packet counters are 32-bit.
//!
//! ```
//! use std::net::Ipv4Addr;
//! use ipvsnl_wire::sockopt::{dests_request, DestsQuery, SockoptDests};
//! let query = DestsQuery::service(6, Ipv4Addr::new(10, 0, 0, 1), 80);
//! let buf = dests_request(&query, 4).unwrap();
//! // Nothing filled: no destination.
//! assert_eq!(SockoptDests::new(&buf).count(), 0);
//! ```

use std::mem::{offset_of, size_of};
use std::net::Ipv4Addr;

use super::{ipv4_at, u32_at, CStatsUser, SockoptStats, IP_VS_BASE_CTL};

/// `IP_VS_SO_GET_DESTS`: the destinations of one IPv4 service
/// ([`dests_request`], [`SockoptDests`]).
pub const IP_VS_SO_GET_DESTS: i32 = IP_VS_BASE_CTL + 4;

/// `IP_VS_CONN_F_FWD_MASK`: the forwarding method's bits of `conn_flags`.
pub const IP_VS_CONN_F_FWD_MASK: u32 = 0x7;

/// `IP_VS_CONN_F_TUNNEL`: the forwarding method number of tunnelling.
pub const IP_VS_CONN_F_TUNNEL: u32 = 0x2;

/// `struct ip_vs_dest_entry` (`addr` and `port` in network order).
#[repr(C)]
#[allow(dead_code)] // only its layout is used
struct CDestEntry {
    addr: u32,
    port: u16,
    conn_flags: u32,
    weight: i32,
    u_threshold: u32,
    l_threshold: u32,
    activeconns: u32,
    inactconns: u32,
    persistconns: u32,
    stats: CStatsUser,
}

/// `struct ip_vs_get_dests`: which service, a count, then the entries.
#[repr(C)]
#[allow(dead_code)] // only its layout is used
struct CGetDests {
    protocol: u16,
    addr: u32,
    port: u16,
    fwmark: u32,
    num_dests: u32,
    entrytable: [CDestEntry; 0],
}

/// The size of one `struct ip_vs_dest_entry` (96 bytes on x86-64).
pub const DEST_ENTRY_SIZE: usize = size_of::<CDestEntry>();

/// Where the entries start in an `IP_VS_SO_GET_DESTS` argument (24 bytes
/// on x86-64: the entries are aligned to 8).
pub const DESTS_HEADER_SIZE: usize = offset_of!(CGetDests, entrytable);

/// The weight an entry left empty keeps (see [`dests_request`]).
const EMPTY_WEIGHT: u32 = u32::MAX;

/// Which IPv4 service an `IP_VS_SO_GET_DESTS` asks about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DestsQuery {
    /// The IP protocol number (0 for a firewall-mark service).
    pub protocol: u16,
    /// The virtual address.
    pub addr: Ipv4Addr,
    /// The virtual port.
    pub port: u16,
    /// The firewall mark (0: the service is found by the three above).
    pub fwmark: u32,
}

impl DestsQuery {
    /// An address-keyed service.
    pub fn service(protocol: u16, addr: Ipv4Addr, port: u16) -> Self {
        DestsQuery {
            protocol,
            addr,
            port,
            fwmark: 0,
        }
    }

    /// A firewall-mark service (IPv4).
    pub fn fwmark(mark: u32) -> Self {
        DestsQuery {
            protocol: 0,
            addr: Ipv4Addr::UNSPECIFIED,
            port: 0,
            fwmark: mark,
        }
    }
}

/// The argument of `IP_VS_SO_GET_DESTS` for `query` with room for `slots`
/// destinations, every entry marked empty (pass all of it: the kernel
/// wants exactly this length). `None` if it would not fit in memory's
/// address range.
pub fn dests_request(query: &DestsQuery, slots: u32) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    dests_request_into(&mut buf, query, slots).then_some(buf)
}

/// [`dests_request`] made in `buf`, for a caller that asks for many
/// services' destinations with one buffer: its header and every entry's
/// weight (the mark of an entry left empty) are written, the entries'
/// other bytes left as they were (the kernel fills an entry whole, and
/// [`SockoptDests`] reads none after the first left empty); false (and
/// `buf` left empty) if it would not fit in memory's address range.
///
/// ```
/// use std::net::Ipv4Addr;
/// use ipvsnl_wire::sockopt::{dests_request, dests_request_into, DestsQuery};
/// let query = DestsQuery::service(6, Ipv4Addr::new(10, 0, 0, 1), 80);
/// let mut buf = vec![7; 3];
/// assert!(dests_request_into(&mut buf, &query, 4));
/// assert_eq!(Some(buf.clone()), dests_request(&query, 4));
/// // Again, smaller: the same header and marks.
/// assert!(dests_request_into(&mut buf, &query, 2));
/// assert_eq!(Some(buf), dests_request(&query, 2));
/// ```
pub fn dests_request_into(buf: &mut Vec<u8>, query: &DestsQuery, slots: u32) -> bool {
    let len = (slots as usize)
        .checked_mul(DEST_ENTRY_SIZE)
        .and_then(|n| n.checked_add(DESTS_HEADER_SIZE));
    let Some(len) = len.filter(|&len| len <= isize::MAX as usize) else {
        buf.clear();
        return false;
    };
    // Not cleared first: zeroing every entry cost 63 instructions a
    // request of 9 slots (measured on the host with
    // `scripts/measure/ipvsadm-text-cost`).
    buf.resize(len, 0);
    buf[..DESTS_HEADER_SIZE].fill(0);
    let mut put = |at: usize, bytes: &[u8]| buf[at..at + bytes.len()].copy_from_slice(bytes);
    put(
        offset_of!(CGetDests, protocol),
        &query.protocol.to_ne_bytes(),
    );
    put(offset_of!(CGetDests, addr), &query.addr.octets());
    put(offset_of!(CGetDests, port), &query.port.to_be_bytes());
    put(offset_of!(CGetDests, fwmark), &query.fwmark.to_ne_bytes());
    put(offset_of!(CGetDests, num_dests), &slots.to_ne_bytes());
    for slot in 0..slots as usize {
        let at = DESTS_HEADER_SIZE + slot * DEST_ENTRY_SIZE + offset_of!(CDestEntry, weight);
        put(at, &EMPTY_WEIGHT.to_ne_bytes());
    }
    true
}

/// The destinations the kernel filled in an `IP_VS_SO_GET_DESTS` buffer
/// made by [`dests_request`], in its order (newest first): an iterator
/// that ends at the first entry left empty (or at the buffer's end).
#[derive(Debug, Clone)]
pub struct SockoptDests<'a> {
    rest: &'a [u8],
}

impl<'a> SockoptDests<'a> {
    /// The entries of `buf` (the whole argument, header included).
    pub fn new(buf: &'a [u8]) -> Self {
        SockoptDests {
            rest: buf.get(DESTS_HEADER_SIZE..).unwrap_or_default(),
        }
    }
}

impl Iterator for SockoptDests<'_> {
    type Item = SockoptDest;

    // Inlined, so that a caller that reads only some fields skips the
    // others (the counters, mostly). Measured on the host with
    // `scripts/measure/ipvsadm-text-cost` (`-S -n` of 10,000 x 5, the library's copy
    // of the destinations, the emulated kernel's part aside): 21.9 million
    // instructions with every field decoded and a buffer allocated per
    // service, 1.9 million with this and one buffer
    // ([`dests_request_into`]).
    #[inline]
    fn next(&mut self) -> Option<SockoptDest> {
        let dest = SockoptDest::decode(self.rest.get(..DEST_ENTRY_SIZE)?)?;
        self.rest = &self.rest[DEST_ENTRY_SIZE..];
        Some(dest)
    }
}

/// One `struct ip_vs_dest_entry`: an IPv4 destination of an IPv4 service
/// as the socket-option interface shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SockoptDest {
    /// The address.
    pub addr: Ipv4Addr,
    /// The port.
    pub port: u16,
    /// The kernel's `conn_flags` of the destination: the forwarding method
    /// in the low three bits ([`SockoptDest::forward_method`]), and bits
    /// of the kernel's own (inactive, no-output).
    pub conn_flags: u32,
    /// The weight.
    pub weight: u32,
    /// The upper connection threshold (0: none).
    pub upper_threshold: u32,
    /// The lower connection threshold.
    pub lower_threshold: u32,
    /// Active connections.
    pub active_conns: u32,
    /// Inactive connections.
    pub inactive_conns: u32,
    /// Persistent connection templates.
    pub persistent_conns: u32,
    /// Its counters and rates (connection and packet counters cut to 32
    /// bits).
    pub stats: SockoptStats,
}

impl SockoptDest {
    /// Reads one entry; `None` if it is short or was left empty by the
    /// kernel (as [`dests_request`] marked it).
    #[inline]
    pub fn decode(b: &[u8]) -> Option<Self> {
        if b.len() < DEST_ENTRY_SIZE {
            return None;
        }
        let weight = u32_at(b, offset_of!(CDestEntry, weight));
        if weight == EMPTY_WEIGHT {
            return None;
        }
        let port_at = offset_of!(CDestEntry, port);
        Some(SockoptDest {
            addr: ipv4_at(b, offset_of!(CDestEntry, addr)),
            port: u16::from_be_bytes([b[port_at], b[port_at + 1]]),
            conn_flags: u32_at(b, offset_of!(CDestEntry, conn_flags)),
            weight,
            upper_threshold: u32_at(b, offset_of!(CDestEntry, u_threshold)),
            lower_threshold: u32_at(b, offset_of!(CDestEntry, l_threshold)),
            active_conns: u32_at(b, offset_of!(CDestEntry, activeconns)),
            inactive_conns: u32_at(b, offset_of!(CDestEntry, inactconns)),
            persistent_conns: u32_at(b, offset_of!(CDestEntry, persistconns)),
            stats: SockoptStats::decode(&b[offset_of!(CDestEntry, stats)..]),
        })
    }

    /// The forwarding method number (`conn_flags & IP_VS_CONN_F_FWD_MASK`,
    /// what netlink's `IPVS_DEST_ATTR_FWD_METHOD` reports).
    pub fn forward_method(&self) -> u32 {
        self.conn_flags & IP_VS_CONN_F_FWD_MASK
    }

    /// Whether it is forwarded by a tunnel (whose type, port and flags
    /// this interface does not say).
    pub fn is_tunnelled(&self) -> bool {
        self.forward_method() == IP_VS_CONN_F_TUNNEL
    }
}

#[cfg(test)]
mod tests;
