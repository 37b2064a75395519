//! The pieces of ipvsadm's text that the rules printers are made of, for
//! a tool that prints services, destinations or connections the way
//! ipvsadm does (the `ipvsnl-ipvsadm` listings are made of them): an
//! address as `inet_ntop` prints it, an address and port with names, the
//! protocol name for service-name lookups, the scheduler flags' names.
//! A program that only reads or writes rules text needs none of them.

use std::net::IpAddr;

pub use super::ntop::ntop;
use super::push::{cut_after, push_ntop, push_u64};
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
    let mut s = String::with_capacity(24);
    push_addr_port(&mut s, addr, port, protocol, names);
    s
}

/// [`addr_port`] appended to `out` (no allocation when `names` names
/// nothing, as [`Numeric`](super::Numeric) does).
///
/// ```
/// use ipvsnl::rules::{style::push_addr_port, Numeric};
/// let mut line = String::from("-r ");
/// push_addr_port(&mut line, &"10.0.0.1".parse().unwrap(), 80, Some("tcp"), &Numeric);
/// assert_eq!(line, "-r 10.0.0.1:80");
/// ```
pub fn push_addr_port(
    out: &mut String,
    addr: &IpAddr,
    port: u16,
    protocol: Option<&str>,
    names: &dyn Names,
) {
    let start = out.len();
    if addr.is_ipv6() {
        out.push('[');
    }
    match names.host_name(addr) {
        Some(host) => out.push_str(&host),
        None => push_ntop(out, addr),
    }
    out.push_str(if addr.is_ipv6() { "]:" } else { ":" });
    match protocol.and_then(|p| names.port_name(port, p)) {
        Some(name) => out.push_str(&name),
        None => push_u64(out, u64::from(port)),
    }
    cut_after(out, start, 59);
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
    let mut out = String::new();
    push_sched_flag_names(&mut out, scheduler, flags);
    out
}

/// [`sched_flag_names`] appended to `out`.
pub(crate) fn push_sched_flag_names(out: &mut String, scheduler: &Scheduler, flags: ServiceFlags) {
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
    let mut first = true;
    for (bit, name) in bits.iter().zip(names) {
        if flags.contains(*bit) && !name.is_empty() {
            if !first {
                out.push(',');
            }
            out.push_str(name);
            first = false;
        }
    }
}
