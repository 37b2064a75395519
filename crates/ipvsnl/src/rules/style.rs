//! The pieces of ipvsadm's text that the rules printers are made of, for
//! a tool that prints services, destinations or connections the way
//! ipvsadm does (the `ipvsnl-ipvsadm` listings are made of them): an
//! address as `inet_ntop` prints it, an address and port with names, the
//! protocol name for service-name lookups, the scheduler flags' names.
//! A program that only reads or writes rules text needs none of them.

use std::net::IpAddr;

pub use super::ntop::ntop;
use super::Names;
use crate::{Protocol, Scheduler, ServiceFlags, ServiceKey};

/// The protocol name used for service-name lookups (`getservbyport`):
/// `tcp`, `udp` or `sctp`; `None` for a fwmark service.
///
/// ```
/// use ipvsnl::rules::style::lookup_protocol;
/// use ipvsnl::ServiceKey;
/// assert_eq!(lookup_protocol(&ServiceKey::udp("10.0.0.1".parse().unwrap(), 53)), Some("udp"));
/// ```
pub fn lookup_protocol(key: &ServiceKey) -> Option<&'static str> {
    match key {
        ServiceKey::Inet { protocol, .. } => match protocol {
            Protocol::Tcp => Some("tcp"),
            Protocol::Udp => Some("udp"),
            Protocol::Sctp => Some("sctp"),
            _ => None,
        },
        ServiceKey::Fwmark { .. } => None,
    }
}

/// An address and port the way ipvsadm prints them
/// (`addrport_to_anyname`): `host:port` or `[host]:port`, the host and
/// port named through `names` when it can, else numeric; cut at 59 bytes.
///
/// `protocol` (`"tcp"`, `"udp"`, `"sctp"`) is the one used to name the
/// port; `None` leaves the port numeric.
///
/// ```
/// use ipvsnl::rules::{style::addr_port, Numeric};
/// assert_eq!(addr_port(&"10.0.0.1".parse().unwrap(), 80, Some("tcp"), &Numeric), "10.0.0.1:80");
/// assert_eq!(addr_port(&"2001:db8::1".parse().unwrap(), 443, None, &Numeric), "[2001:db8::1]:443");
/// ```
pub fn addr_port(addr: &IpAddr, port: u16, protocol: Option<&str>, names: &dyn Names) -> String {
    let host = names.host_name(addr).unwrap_or_else(|| ntop(addr));
    let port = protocol
        .and_then(|p| names.port_name(port, p))
        .unwrap_or_else(|| port.to_string());
    let mut s = match addr {
        IpAddr::V4(_) => format!("{host}:{port}"),
        IpAddr::V6(_) => format!("[{host}]:{port}"),
    };
    if s.len() > 59 {
        let mut end = 59;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}

/// The scheduler flags as ipvsadm names them for a scheduler:
/// `sh-fallback,sh-port` for sh, `mh-...` for mh, `flag-N` otherwise.
///
/// ```
/// use ipvsnl::rules::style::sched_flag_names;
/// use ipvsnl::{Scheduler, ServiceFlags};
/// let f = ServiceFlags::SCHED1 | ServiceFlags::SCHED2;
/// assert_eq!(sched_flag_names(&Scheduler::SourceHashing, f), "sh-fallback,sh-port");
/// assert_eq!(sched_flag_names(&Scheduler::RoundRobin, f), "flag-1,flag-2");
/// ```
pub fn sched_flag_names(scheduler: &Scheduler, flags: ServiceFlags) -> String {
    let names: [&str; 3] = match scheduler.name() {
        "sh" => ["sh-fallback", "sh-port", ""],
        "mh" => ["mh-fallback", "mh-port", ""],
        _ => ["flag-1", "flag-2", "flag-3"],
    };
    let bits = [
        ServiceFlags::SCHED1,
        ServiceFlags::SCHED2,
        ServiceFlags::SCHED3,
    ];
    let mut out: Vec<&str> = Vec::new();
    for (bit, name) in bits.iter().zip(names) {
        if flags.contains(*bit) && !name.is_empty() {
            out.push(name);
        }
    }
    out.join(",")
}
