//! Virtual services: their key, configuration and listed state.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use bitflags::bitflags;

use super::invalid::InvalidValue;
use super::scheduler::check_name;
use crate::{AddressFamily, Protocol, Scheduler};

/// What identifies a virtual service in the kernel's table.
///
/// Its text form is what `Display` prints, and `parse` reads it back
/// (see [`ParseKeyError`](crate::ParseKeyError) for the forms).
///
/// ```
/// use ipvsnl::{AddressFamily, ServiceKey};
/// let web = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// assert_eq!(web.to_string(), "TCP 10.0.0.1:80");
/// let v6 = ServiceKey::udp("2001:db8::1".parse().unwrap(), 53);
/// assert_eq!(v6.to_string(), "UDP [2001:db8::1]:53");
/// let mark = ServiceKey::fwmark(5, AddressFamily::Inet6);
/// assert_eq!(mark.family(), AddressFamily::Inet6);
/// assert_eq!(mark.to_string(), "fwmark 5 (IPv6)");
/// assert_eq!("fwmark 5 (IPv6)".parse::<ServiceKey>().unwrap(), mark);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum ServiceKey {
    /// A service on a protocol, virtual address and port.
    Inet {
        /// The transport protocol.
        protocol: Protocol,
        /// The virtual address.
        addr: IpAddr,
        /// The virtual port (0 for a port-less persistent service).
        port: u16,
    },
    /// A service matching packets with a firewall mark, per address family.
    Fwmark {
        /// The mark; must be non-zero.
        mark: u32,
        /// The address family (`-f 5` and `-f 5 -6` are two services).
        family: AddressFamily,
    },
}

impl ServiceKey {
    /// A TCP service.
    pub fn tcp(addr: IpAddr, port: u16) -> Self {
        ServiceKey::Inet {
            protocol: Protocol::Tcp,
            addr,
            port,
        }
    }

    /// A UDP service.
    pub fn udp(addr: IpAddr, port: u16) -> Self {
        ServiceKey::Inet {
            protocol: Protocol::Udp,
            addr,
            port,
        }
    }

    /// An SCTP service.
    pub fn sctp(addr: IpAddr, port: u16) -> Self {
        ServiceKey::Inet {
            protocol: Protocol::Sctp,
            addr,
            port,
        }
    }

    /// A service on `protocol` at a socket address (an IPv6 one's flow
    /// label and scope are not part of a service and are dropped).
    ///
    /// ```
    /// use std::net::SocketAddr;
    /// use ipvsnl::{Protocol, ServiceKey};
    /// let at: SocketAddr = "[2001:db8::1]:443".parse().unwrap();
    /// let key = ServiceKey::inet(Protocol::Tcp, at);
    /// assert_eq!(key, ServiceKey::tcp(at.ip(), 443));
    /// assert_eq!(key.socket_addr(), Some(at));
    /// ```
    pub fn inet(protocol: Protocol, at: SocketAddr) -> Self {
        ServiceKey::Inet {
            protocol,
            addr: at.ip(),
            port: at.port(),
        }
    }

    /// The virtual address and port of an address-keyed service (none for
    /// a firewall-mark one).
    pub fn socket_addr(&self) -> Option<SocketAddr> {
        match self {
            ServiceKey::Inet { addr, port, .. } => Some(SocketAddr::new(*addr, *port)),
            ServiceKey::Fwmark { .. } => None,
        }
    }

    /// A firewall-mark service.
    pub fn fwmark(mark: u32, family: AddressFamily) -> Self {
        ServiceKey::Fwmark { mark, family }
    }

    /// The service's address family.
    pub fn family(&self) -> AddressFamily {
        match self {
            ServiceKey::Inet { addr, .. } => AddressFamily::of(addr),
            ServiceKey::Fwmark { family, .. } => *family,
        }
    }

    /// Whether this is a firewall-mark service.
    pub fn is_fwmark(&self) -> bool {
        matches!(self, ServiceKey::Fwmark { .. })
    }

    /// Checks what the kernel would refuse or misread.
    pub fn validate(&self) -> Result<(), InvalidValue> {
        if let ServiceKey::Fwmark { mark: 0, .. } = self {
            return Err(InvalidValue::new(
                "fwmark",
                "0 is not a mark: the kernel would read the service as address-keyed",
            ));
        }
        Ok(())
    }
}

impl fmt::Display for ServiceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServiceKey::Inet {
                protocol,
                addr: IpAddr::V4(a),
                port,
            } => {
                write!(f, "{protocol} {a}:{port}")
            }
            ServiceKey::Inet {
                protocol,
                addr: IpAddr::V6(a),
                port,
            } => {
                write!(f, "{protocol} [{a}]:{port}")
            }
            ServiceKey::Fwmark { mark, family } => write!(f, "fwmark {mark} ({family})"),
        }
    }
}

bitflags! {
    /// Service flags (`IP_VS_SVC_F_*`).
    ///
    /// Bits this crate does not name are kept as they came.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
    pub struct ServiceFlags: u32 {
        /// Persistent service: a client sticks to one destination.
        const PERSISTENT = 0x0001;
        /// Kernel-internal; set in every reply, ignored on input. This crate
        /// removes it from listed services.
        const HASHED = 0x0002;
        /// One-packet scheduling (UDP).
        const ONE_PACKET = 0x0004;
        /// Scheduler flag 1: `sh-fallback` for sh, `mh-fallback` for mh.
        const SCHED1 = 0x0008;
        /// Scheduler flag 2: `sh-port` for sh, `mh-port` for mh.
        const SCHED2 = 0x0010;
        /// Scheduler flag 3 (no in-tree scheduler uses it).
        const SCHED3 = 0x0020;
        /// `sh-fallback`: on an unavailable server, pick another.
        const SH_FALLBACK = Self::SCHED1.bits();
        /// `sh-port`: hash the source port too.
        const SH_PORT = Self::SCHED2.bits();
        /// `mh-fallback`: on an unavailable server, pick another.
        const MH_FALLBACK = Self::SCHED1.bits();
        /// `mh-port`: hash the source port too.
        const MH_PORT = Self::SCHED2.bits();
        const _ = !0;
    }
}

/// The persistence granularity: clients whose addresses fall in one netmask
/// share a destination.
///
/// For IPv4 it is a mask; for IPv6 a prefix length (1 to 128). On the wire
/// the two are encoded differently; this type hides that.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
#[non_exhaustive]
pub enum Netmask {
    /// An IPv4 mask, e.g. 255.255.255.0.
    V4(Ipv4Addr),
    /// An IPv6 prefix length.
    V6(u8),
}

impl Netmask {
    /// The kernel's default for a family: a single host.
    pub fn host(family: AddressFamily) -> Self {
        match family {
            AddressFamily::Inet => Netmask::V4(Ipv4Addr::BROADCAST),
            AddressFamily::Inet6 => Netmask::V6(128),
        }
    }

    /// The family this netmask belongs to.
    pub fn family(&self) -> AddressFamily {
        match self {
            Netmask::V4(_) => AddressFamily::Inet,
            Netmask::V6(_) => AddressFamily::Inet6,
        }
    }

    /// The four bytes the kernel expects for a service of this netmask's
    /// family (network-order mask, or host-order prefix length).
    pub(crate) fn to_wire(self) -> [u8; 4] {
        match self {
            Netmask::V4(mask) => mask.octets(),
            Netmask::V6(prefix) => u32::from(prefix).to_ne_bytes(),
        }
    }

    /// Reads the four bytes of a service of `family`.
    pub(crate) fn from_wire(raw: [u8; 4], family: AddressFamily) -> Self {
        match family {
            AddressFamily::Inet => Netmask::V4(Ipv4Addr::from(raw)),
            AddressFamily::Inet6 => {
                Netmask::V6(u8::try_from(u32::from_ne_bytes(raw)).unwrap_or(u8::MAX))
            }
        }
    }
}

impl fmt::Display for Netmask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Netmask::V4(m) => write!(f, "{m}"),
            Netmask::V6(p) => write!(f, "{p}"),
        }
    }
}

/// A virtual service's configuration: what you add, edit and compare.
///
/// ```
/// use ipvsnl::{Scheduler, Service, ServiceFlags, ServiceKey};
/// let svc = Service::new(ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80))
///     .with_scheduler(Scheduler::RoundRobin)
///     .with_persistence(300);
/// assert!(svc.flags.contains(ServiceFlags::PERSISTENT));
/// assert_eq!(svc.timeout, 300);
/// svc.validate().unwrap();
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(from = "crate::model::serde_impls::ServiceSpec")
)]
#[non_exhaustive]
pub struct Service {
    /// What identifies it.
    pub key: ServiceKey,
    /// The scheduler.
    pub scheduler: Scheduler,
    /// Flags (persistence, one-packet, scheduler flags). Never `HASHED`.
    pub flags: ServiceFlags,
    /// Persistence timeout in seconds (used with `PERSISTENT`).
    pub timeout: u32,
    /// Persistence granularity.
    pub netmask: Netmask,
    /// Persistence engine (e.g. `sip`), if any.
    pub persistence_engine: Option<String>,
}

/// The longest persistence engine name the kernel accepts.
pub const PE_NAME_MAX: usize = 15;

impl Service {
    /// A service with ipvsadm's defaults: `wlc`, no flags, host netmask.
    pub fn new(key: ServiceKey) -> Self {
        Service {
            key,
            scheduler: Scheduler::default(),
            flags: ServiceFlags::empty(),
            timeout: 0,
            netmask: Netmask::host(key.family()),
            persistence_engine: None,
        }
    }

    /// Sets the scheduler.
    #[must_use]
    pub fn with_scheduler(mut self, scheduler: Scheduler) -> Self {
        self.scheduler = scheduler;
        self
    }

    /// Makes the service persistent with a timeout in seconds.
    #[must_use]
    pub fn with_persistence(mut self, timeout: u32) -> Self {
        self.flags |= ServiceFlags::PERSISTENT;
        self.timeout = timeout;
        self
    }

    /// Sets the persistence netmask.
    #[must_use]
    pub fn with_netmask(mut self, netmask: Netmask) -> Self {
        self.netmask = netmask;
        self
    }

    /// Adds flags.
    #[must_use]
    pub fn with_flags(mut self, flags: ServiceFlags) -> Self {
        self.flags |= flags;
        self
    }

    /// Sets the persistence engine.
    #[must_use]
    pub fn with_persistence_engine(mut self, name: impl Into<String>) -> Self {
        self.persistence_engine = Some(name.into());
        self
    }

    /// Checks what the kernel would refuse, before anything is sent.
    pub fn validate(&self) -> Result<(), InvalidValue> {
        self.key.validate()?;
        // Re-check the name: an unchecked `Scheduler::Other` can come from
        // ipvsadm's grammar (which leaves the check to the kernel).
        Scheduler::new(self.scheduler.name())?;
        if self.netmask.family() != self.key.family() {
            return Err(InvalidValue::new(
                "netmask",
                format!(
                    "{} netmask {} on an {} service",
                    self.netmask.family(),
                    self.netmask,
                    self.key.family()
                ),
            ));
        }
        if let Netmask::V6(p) = self.netmask {
            if !(1..=128).contains(&p) {
                return Err(InvalidValue::new(
                    "netmask",
                    format!("IPv6 prefix length {p} is outside 1..=128"),
                ));
            }
        }
        if let Some(pe) = &self.persistence_engine {
            check_name("persistence engine", pe, PE_NAME_MAX, true)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn netmask_wire_forms_differ_per_family() {
        let v4 = Netmask::V4(Ipv4Addr::new(255, 255, 255, 0));
        assert_eq!(v4.to_wire(), [255, 255, 255, 0]);
        assert_eq!(Netmask::from_wire(v4.to_wire(), AddressFamily::Inet), v4);
        let v6 = Netmask::V6(64);
        assert_eq!(v6.to_wire(), 64u32.to_ne_bytes());
        assert_eq!(Netmask::from_wire(v6.to_wire(), AddressFamily::Inet6), v6);
    }

    #[test]
    fn validation_names_the_problem() {
        let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
        let bad = Service::new(key).with_netmask(Netmask::V6(64));
        let e = bad.validate().unwrap_err().to_string();
        assert!(e.contains("netmask"), "{e}");
        let v6 = ServiceKey::tcp("2001:db8::1".parse().unwrap(), 80);
        assert!(Service::new(v6)
            .with_netmask(Netmask::V6(0))
            .validate()
            .is_err());
        // The kernel takes any IPv4 mask, contiguous or not; so does the model.
        Service::new(key)
            .with_netmask(Netmask::V4(Ipv4Addr::new(255, 0, 255, 0)))
            .validate()
            .unwrap();
        assert!(Service::new(ServiceKey::fwmark(0, AddressFamily::Inet))
            .validate()
            .is_err());
        assert!(Service::new(key)
            .with_persistence_engine("a-very-long-engine")
            .validate()
            .is_err());
        let mut odd = Service::new(key);
        odd.scheduler = Scheduler::from_kernel(&"x".repeat(16));
        assert!(odd.validate().is_err());
    }

    #[test]
    fn scheduler_flag_aliases_share_bits() {
        assert_eq!(ServiceFlags::SH_PORT, ServiceFlags::MH_PORT);
        assert_eq!(ServiceFlags::from_bits_retain(0x400).bits(), 0x400);
    }
}
