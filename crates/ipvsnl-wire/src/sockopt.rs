//! The older interface of IPVS, socket options: `getsockopt(fd,
//! IPPROTO_IP, IP_VS_SO_GET_*, buf, &len)` on any IPv4 socket of the
//! namespace (a plain `SOCK_DGRAM` one will do; the kernel checks
//! `CAP_NET_ADMIN`). Here are its option numbers and the structs of
//! `include/uapi/linux/ip_vs.h` it copies, read from bytes; the call
//! itself is the caller's.
//!
//! What it is good for: `IP_VS_SO_GET_SERVICES` copies every IPv4
//! service of the caller's namespace in one call, under the kernel's IPVS
//! mutex: one consistent snapshot, which a netlink dump taken in several
//! parts is not (each part is made under the mutex, but the next one
//! resumes by a position counted over every namespace's services).
//!
//! Its limits, measured on the Debian 6.1 and 6.12 kernels:
//!
//! - IPv4 services only (address-keyed and firewall-mark ones), and
//!   `num_services` of `IP_VS_SO_GET_INFO` counts only those: no IPv6
//!   service is seen or counted by this interface.
//! - `IP_VS_SO_GET_SERVICES` wants the argument's length to be exactly
//!   that of its `num_services` entries (`EINVAL` otherwise). It fills the
//!   entries from the first, in the order of the kernel's hash tables (the
//!   order of a netlink dump), leaves the rest as they were and does not
//!   say how many it filled: with a zeroed buffer, the first entry with an
//!   empty scheduler name is the end (every service has a scheduler name,
//!   `none` at least). More services than entries: the rest are left out,
//!   silently.
//! - No persistence engine, no tunnel settings; 32-bit connection and
//!   packet counters.
//! - `IP_VS_SO_GET_DESTS` lists one IPv4 service's destinations, without
//!   those of the other family and without tunnel settings (see
//!   [`dests_request`]'s module).
//!
//! The structs are laid out as the target's C compiler lays them out: the
//! offsets here come from `#[repr(C)]` mirrors of them, so a target where
//! a 64-bit integer is aligned to 4 bytes (i686) gets its own.
//!
//! ```
//! use ipvsnl_wire::sockopt::{services_request, SockoptServices, SERVICE_ENTRY_SIZE};
//! // Room for two services; the kernel would fill them in place.
//! let buf = services_request(2).unwrap();
//! assert_eq!(buf.len(), SockoptServices::HEADER_SIZE + 2 * SERVICE_ENTRY_SIZE);
//! // Nothing filled: no service.
//! assert_eq!(SockoptServices::new(&buf).count(), 0);
//! ```

use std::mem::{offset_of, size_of};
use std::net::Ipv4Addr;

mod dests;

pub use dests::{
    dests_request, dests_request_into, DestsQuery, SockoptDest, SockoptDests, DESTS_HEADER_SIZE,
    DEST_ENTRY_SIZE, IP_VS_CONN_F_FWD_MASK, IP_VS_CONN_F_TUNNEL, IP_VS_SO_GET_DESTS,
};

/// The first IPVS socket option number (`IP_VS_BASE_CTL`).
pub const IP_VS_BASE_CTL: i32 = 64 + 1024 + 64;
/// `IP_VS_SO_GET_INFO`: version, connection table size, IPv4 service count
/// ([`SockoptInfo`]).
pub const IP_VS_SO_GET_INFO: i32 = IP_VS_BASE_CTL + 1;
/// `IP_VS_SO_GET_SERVICES`: every IPv4 service ([`services_request`],
/// [`SockoptServices`]).
pub const IP_VS_SO_GET_SERVICES: i32 = IP_VS_BASE_CTL + 2;

/// `struct ip_vs_getinfo`.
#[repr(C)]
#[allow(dead_code)] // only its layout is used
struct CGetInfo {
    version: u32,
    size: u32,
    num_services: u32,
}

/// `struct ip_vs_stats_user`.
#[repr(C)]
#[allow(dead_code)] // only its layout is used
struct CStatsUser {
    conns: u32,
    inpkts: u32,
    outpkts: u32,
    inbytes: u64,
    outbytes: u64,
    cps: u32,
    inpps: u32,
    outpps: u32,
    inbps: u32,
    outbps: u32,
}

/// `struct ip_vs_service_entry` (`addr`, `port` and `netmask` in network
/// order).
#[repr(C)]
#[allow(dead_code)] // only its layout is used
struct CServiceEntry {
    protocol: u16,
    addr: u32,
    port: u16,
    fwmark: u32,
    sched_name: [u8; SCHED_NAME_LEN],
    flags: u32,
    timeout: u32,
    netmask: u32,
    num_dests: u32,
    stats: CStatsUser,
}

/// `struct ip_vs_get_services`: a count, then the entries.
#[repr(C)]
#[allow(dead_code)] // only its layout is used
struct CGetServices {
    num_services: u32,
    entrytable: [CServiceEntry; 0],
}

/// `IP_VS_SCHEDNAME_MAXLEN`.
const SCHED_NAME_LEN: usize = 16;

/// The size of one `struct ip_vs_service_entry` (104 bytes on x86-64).
pub const SERVICE_ENTRY_SIZE: usize = size_of::<CServiceEntry>();

/// The reply of `IP_VS_SO_GET_INFO`.
///
/// ```
/// use ipvsnl_wire::sockopt::SockoptInfo;
/// let mut buf = vec![0u8; SockoptInfo::SIZE];
/// buf[..4].copy_from_slice(&0x010201u32.to_ne_bytes());
/// buf[4..8].copy_from_slice(&4096u32.to_ne_bytes());
/// buf[8..12].copy_from_slice(&3u32.to_ne_bytes());
/// let info = SockoptInfo::decode(&buf).unwrap();
/// assert_eq!((info.version, info.conn_table_size, info.ipv4_services), (0x010201, 4096, 3));
/// assert!(SockoptInfo::decode(&buf[..8]).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SockoptInfo {
    /// The IPVS version (`0x010201` is 1.2.1).
    pub version: u32,
    /// The size of the connection hash table.
    pub conn_table_size: u32,
    /// The namespace's IPv4 services (address-keyed and firewall-mark);
    /// IPv6 ones are not counted.
    pub ipv4_services: u32,
}

impl SockoptInfo {
    /// The length of the argument and reply (`struct ip_vs_getinfo`).
    pub const SIZE: usize = size_of::<CGetInfo>();

    /// Reads the reply; an error names what is short.
    pub fn decode(buf: &[u8]) -> Result<Self, String> {
        if buf.len() < Self::SIZE {
            return Err(format!(
                "IP_VS_SO_GET_INFO reply of {} bytes, {} expected",
                buf.len(),
                Self::SIZE
            ));
        }
        Ok(SockoptInfo {
            version: u32_at(buf, offset_of!(CGetInfo, version)),
            conn_table_size: u32_at(buf, offset_of!(CGetInfo, size)),
            ipv4_services: u32_at(buf, offset_of!(CGetInfo, num_services)),
        })
    }
}

/// The argument of `IP_VS_SO_GET_SERVICES` with room for `slots` services:
/// zeroed, with its count set (pass all of it: the kernel wants exactly
/// this length). `None` if it would not fit in memory's address range.
pub fn services_request(slots: u32) -> Option<Vec<u8>> {
    let len = (slots as usize)
        .checked_mul(SERVICE_ENTRY_SIZE)?
        .checked_add(SockoptServices::HEADER_SIZE)?;
    if len > isize::MAX as usize {
        return None;
    }
    let mut buf = vec![0u8; len];
    let at = offset_of!(CGetServices, num_services);
    buf[at..at + 4].copy_from_slice(&slots.to_ne_bytes());
    Some(buf)
}

/// The services the kernel filled in an `IP_VS_SO_GET_SERVICES` buffer
/// made by [`services_request`], in its order: an iterator of views into
/// the buffer that ends at the first entry left empty (or at the buffer's
/// end).
#[derive(Debug, Clone)]
pub struct SockoptServices<'a> {
    rest: &'a [u8],
}

impl<'a> SockoptServices<'a> {
    /// Where the entries start (`struct ip_vs_get_services`' header, 8
    /// bytes on x86-64).
    pub const HEADER_SIZE: usize = offset_of!(CGetServices, entrytable);

    /// The entries of `buf` (the whole argument, header included).
    pub fn new(buf: &'a [u8]) -> Self {
        SockoptServices {
            rest: buf.get(Self::HEADER_SIZE..).unwrap_or_default(),
        }
    }
}

impl<'a> Iterator for SockoptServices<'a> {
    type Item = SockoptEntry<'a>;

    fn next(&mut self) -> Option<SockoptEntry<'a>> {
        let entry = SockoptEntry::new(self.rest.get(..SERVICE_ENTRY_SIZE)?)?;
        self.rest = &self.rest[SERVICE_ENTRY_SIZE..];
        Some(entry)
    }
}

/// One filled `struct ip_vs_service_entry`, read where it lies: each
/// accessor reads its field alone (what identifies the service is all a
/// comparison of thousands needs), [`SockoptEntry::service`] reads them
/// all. The accessors are inlined: a settings listing of 10,000 services
/// reads the keys of its snapshot twice, 1.0 million instructions less so
/// (measured on the host with `scripts/measure/ipvsadm-text-cost`).
#[derive(Debug, Clone, Copy)]
pub struct SockoptEntry<'a> {
    bytes: &'a [u8],
}

impl<'a> SockoptEntry<'a> {
    /// The entry of `bytes`; `None` if it is short or was left empty (no
    /// scheduler name).
    #[inline]
    pub fn new(bytes: &'a [u8]) -> Option<Self> {
        let filled =
            bytes.len() >= SERVICE_ENTRY_SIZE && bytes[offset_of!(CServiceEntry, sched_name)] != 0;
        filled.then_some(SockoptEntry { bytes })
    }

    /// The IP protocol number.
    #[inline]
    pub fn protocol(&self) -> u16 {
        u16_at(self.bytes, offset_of!(CServiceEntry, protocol))
    }

    /// The virtual address.
    #[inline]
    pub fn addr(&self) -> Ipv4Addr {
        ipv4_at(self.bytes, offset_of!(CServiceEntry, addr))
    }

    /// The virtual port.
    #[inline]
    pub fn port(&self) -> u16 {
        let at = offset_of!(CServiceEntry, port);
        u16::from_be_bytes([self.bytes[at], self.bytes[at + 1]])
    }

    /// The firewall mark (0: an address-keyed service).
    #[inline]
    pub fn fwmark(&self) -> u32 {
        u32_at(self.bytes, offset_of!(CServiceEntry, fwmark))
    }

    /// How many destinations it has, of either address family.
    #[inline]
    pub fn num_dests(&self) -> u32 {
        u32_at(self.bytes, offset_of!(CServiceEntry, num_dests))
    }

    /// Every field.
    pub fn service(&self) -> SockoptService {
        let b = self.bytes;
        let at = offset_of!(CServiceEntry, sched_name);
        let mut sched_name = [0u8; SCHED_NAME_LEN];
        sched_name.copy_from_slice(&b[at..at + SCHED_NAME_LEN]);
        SockoptService {
            protocol: self.protocol(),
            addr: self.addr(),
            port: self.port(),
            fwmark: self.fwmark(),
            sched_name,
            flags: u32_at(b, offset_of!(CServiceEntry, flags)),
            timeout: u32_at(b, offset_of!(CServiceEntry, timeout)),
            netmask: ipv4_at(b, offset_of!(CServiceEntry, netmask)),
            num_dests: self.num_dests(),
            stats: SockoptStats::decode(&b[offset_of!(CServiceEntry, stats)..]),
        }
    }
}

/// One `struct ip_vs_service_entry`: an IPv4 service as the socket-option
/// interface shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SockoptService {
    /// The IP protocol number (what was set for a firewall-mark service
    /// too).
    pub protocol: u16,
    /// The virtual address (0.0.0.0 for a firewall-mark service).
    pub addr: Ipv4Addr,
    /// The virtual port.
    pub port: u16,
    /// The firewall mark (0: an address-keyed service).
    pub fwmark: u32,
    /// The scheduler's name, NUL-padded.
    pub sched_name: [u8; SCHED_NAME_LEN],
    /// The service flags (`IP_VS_SVC_F_*`).
    pub flags: u32,
    /// The persistence timeout in seconds.
    pub timeout: u32,
    /// The persistence netmask.
    pub netmask: Ipv4Addr,
    /// How many destinations it has.
    pub num_dests: u32,
    /// Its counters and rates.
    pub stats: SockoptStats,
}

/// `struct ip_vs_stats_user`: counters since the last zero and rates
/// (connection and packet counters are 32-bit here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct SockoptStats {
    /// Connections scheduled.
    pub conns: u32,
    /// Incoming packets.
    pub inpkts: u32,
    /// Outgoing packets.
    pub outpkts: u32,
    /// Incoming bytes.
    pub inbytes: u64,
    /// Outgoing bytes.
    pub outbytes: u64,
    /// Connections per second.
    pub cps: u32,
    /// Incoming packets per second.
    pub inpps: u32,
    /// Outgoing packets per second.
    pub outpps: u32,
    /// Incoming bytes per second.
    pub inbps: u32,
    /// Outgoing bytes per second.
    pub outbps: u32,
}

impl SockoptService {
    /// Reads one entry; `None` if it is short or was left empty (no
    /// scheduler name).
    pub fn decode(entry: &[u8]) -> Option<Self> {
        SockoptEntry::new(entry).map(|e| e.service())
    }

    /// The scheduler's name (up to its NUL), if it is UTF-8.
    pub fn scheduler(&self) -> Option<&str> {
        let end = self
            .sched_name
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(SCHED_NAME_LEN);
        std::str::from_utf8(&self.sched_name[..end]).ok()
    }
}

impl SockoptStats {
    /// Reads the counters at the start of `b` (long enough: checked by the
    /// entry's caller).
    #[inline]
    fn decode(b: &[u8]) -> Self {
        let u32_of = |at| u32_at(b, at);
        let u64_of = |at: usize| {
            let mut v = [0u8; 8];
            v.copy_from_slice(&b[at..at + 8]);
            u64::from_ne_bytes(v)
        };
        SockoptStats {
            conns: u32_of(offset_of!(CStatsUser, conns)),
            inpkts: u32_of(offset_of!(CStatsUser, inpkts)),
            outpkts: u32_of(offset_of!(CStatsUser, outpkts)),
            inbytes: u64_of(offset_of!(CStatsUser, inbytes)),
            outbytes: u64_of(offset_of!(CStatsUser, outbytes)),
            cps: u32_of(offset_of!(CStatsUser, cps)),
            inpps: u32_of(offset_of!(CStatsUser, inpps)),
            outpps: u32_of(offset_of!(CStatsUser, outpps)),
            inbps: u32_of(offset_of!(CStatsUser, inbps)),
            outbps: u32_of(offset_of!(CStatsUser, outbps)),
        }
    }
}

#[inline]
fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_ne_bytes([b[at], b[at + 1]])
}

#[inline]
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// An address in network order.
#[inline]
fn ipv4_at(b: &[u8], at: usize) -> Ipv4Addr {
    Ipv4Addr::new(b[at], b[at + 1], b[at + 2], b[at + 3])
}

#[cfg(test)]
mod tests;
