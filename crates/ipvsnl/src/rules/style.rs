//! The pieces of ipvsadm's text that the rules printers are made of, for
//! a tool that prints services, destinations or connections the way
//! ipvsadm does (the `ipvsnl-ipvsadm` listings are made of them): an
//! address as `inet_ntop` prints it, an address and port with names, the
//! protocol name for service-name lookups, the scheduler flags' names.
//! A program that only reads or writes rules text needs none of them.

use std::net::IpAddr;

pub use super::ntop::ntop;
use super::push::{push_ipv4_port, push_ntop, push_u64, Text};
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
    put_addr_port(out, addr, port, protocol, names);
}

/// [`push_addr_port`] into any [`Text`].
pub(crate) fn put_addr_port(
    out: &mut impl Text,
    addr: &IpAddr,
    port: u16,
    protocol: Option<&str>,
    names: &dyn Names,
) {
    let host = names.host_name(addr);
    let port_name = protocol.and_then(|p| names.port_name(port, p));
    put_named_addr_port(out, addr, port, host, port_name);
}

/// [`put_addr_port`] with the names looked up already.
pub(crate) fn put_named_addr_port(
    out: &mut impl Text,
    addr: &IpAddr,
    port: u16,
    host: Option<String>,
    port_name: Option<String>,
) {
    if let (IpAddr::V4(a), None, None) = (addr, &host, &port_name) {
        // Never longer than 21 bytes: nothing to cut.
        push_ipv4_port(out, a, port);
        return;
    }
    let start = out.len_bytes();
    if addr.is_ipv6() {
        out.ascii(b'[');
    }
    match host {
        Some(host) => out.text(&host),
        None => push_ntop(out, addr),
    }
    out.text(if addr.is_ipv6() { "]:" } else { ":" });
    match port_name {
        Some(name) => out.text(&name),
        None => push_u64(out, u64::from(port)),
    }
    out.cut_after(start, 59);
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
pub(crate) fn push_sched_flag_names(
    out: &mut impl Text,
    scheduler: &Scheduler,
    flags: ServiceFlags,
) {
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
                out.ascii(b',');
            }
            out.text(name);
            first = false;
        }
    }
}
