//! Address families and transport protocols.

use std::fmt;
use std::net::IpAddr;

use super::other::OtherProtocol;

/// The address family of a service or destination.
///
/// ```
/// use ipvsnl::AddressFamily;
/// let ip: std::net::IpAddr = "2001:db8::1".parse().unwrap();
/// assert_eq!(AddressFamily::of(&ip), AddressFamily::Inet6);
/// assert_eq!(AddressFamily::Inet.to_raw(), 2);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
#[non_exhaustive]
pub enum AddressFamily {
    /// IPv4 (`AF_INET`, 2).
    Inet,
    /// IPv6 (`AF_INET6`, 10).
    Inet6,
}

impl AddressFamily {
    /// The family of an address.
    pub fn of(addr: &IpAddr) -> Self {
        match addr {
            IpAddr::V4(_) => AddressFamily::Inet,
            IpAddr::V6(_) => AddressFamily::Inet6,
        }
    }

    /// The kernel's `AF_*` number.
    pub fn to_raw(self) -> u16 {
        match self {
            AddressFamily::Inet => libc::AF_INET as u16,
            AddressFamily::Inet6 => libc::AF_INET6 as u16,
        }
    }

    /// The family for a kernel `AF_*` number, if it is one IPVS supports.
    pub fn from_raw(raw: u16) -> Option<Self> {
        match i32::from(raw) {
            libc::AF_INET => Some(AddressFamily::Inet),
            libc::AF_INET6 => Some(AddressFamily::Inet6),
            _ => None,
        }
    }
}

impl fmt::Display for AddressFamily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AddressFamily::Inet => "IPv4",
            AddressFamily::Inet6 => "IPv6",
        })
    }
}

/// The transport protocol of an address-keyed service.
///
/// [`Protocol::from_raw`] gives the named value for a known number, and
/// [`Protocol::Other`] only for another one: a protocol has one spelling.
///
/// ```
/// use ipvsnl::Protocol;
/// assert_eq!(Protocol::from_raw(132), Protocol::Sctp);
/// assert_eq!(Protocol::from_raw(6), Protocol::Tcp);
/// assert!(matches!(Protocol::from_raw(1), Protocol::Other(p) if p.get() == 1));
/// assert_eq!(Protocol::Udp.to_string(), "UDP");
/// assert_eq!(Protocol::from_raw(1).to_string(), "protocol 1");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Protocol {
    /// TCP (6).
    Tcp,
    /// UDP (17).
    Udp,
    /// SCTP (132).
    Sctp,
    /// Another IP protocol number (the kernel does not check it); never
    /// the number of one above.
    Other(OtherProtocol),
}

impl Protocol {
    /// The IP protocol number.
    pub fn to_raw(self) -> u16 {
        match self {
            Protocol::Tcp => 6,
            Protocol::Udp => 17,
            Protocol::Sctp => 132,
            Protocol::Other(n) => n.get(),
        }
    }

    /// The protocol for an IP protocol number: the named value for 6, 17
    /// and 132, [`Protocol::Other`] for any other.
    pub fn from_raw(raw: u16) -> Self {
        match raw {
            6 => Protocol::Tcp,
            17 => Protocol::Udp,
            132 => Protocol::Sctp,
            n => Protocol::Other(OtherProtocol(n)),
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Protocol::Tcp => f.write_str("TCP"),
            Protocol::Udp => f.write_str("UDP"),
            Protocol::Sctp => f.write_str("SCTP"),
            Protocol::Other(n) => write!(f, "protocol {n}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every number gives the named value when there is one, `Other` only
    /// otherwise, and comes back unchanged.
    #[test]
    fn protocol_numbers_normalise_and_round_trip() {
        let named = [
            (6, Protocol::Tcp),
            (17, Protocol::Udp),
            (132, Protocol::Sctp),
        ];
        for (raw, p) in named {
            assert_eq!(Protocol::from_raw(raw), p);
            assert_eq!(p.to_raw(), raw);
        }
        for raw in 0..=u16::MAX {
            let p = Protocol::from_raw(raw);
            assert_eq!(p.to_raw(), raw);
            let known = named.iter().any(|(n, _)| *n == raw);
            assert_eq!(matches!(p, Protocol::Other(_)), !known, "{raw}");
        }
    }
}
