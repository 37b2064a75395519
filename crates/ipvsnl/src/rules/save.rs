//! Printing services and destinations as rules (`ipvsadm -S` lines).

use std::net::IpAddr;

use super::push::{push_i64, push_ipv4, push_u64, put_i32, put_ipv4_port, Text};
use super::push::{I32_ROOM, IPV4_PORT_ROOM, LINE};
use super::style::{lookup_protocol, push_sched_flag_names, put_addr_port, put_named_addr_port};
use super::Names;
use crate::sync::Table;
use crate::{
    AddressFamily, Destination, Forward, Netmask, Protocol, Service, ServiceFlags, ServiceKey,
    TunnelFlags, TunnelKind,
};

/// The service part of a rule: `-t 10.0.0.1:80`, `-u ...`,
/// `--sctp-service ...`, `-f 5` or `-f 5 -6` (fwmarks print as signed
/// 32-bit numbers, as ipvsadm does).
pub(crate) fn service_rule_label(key: &ServiceKey, names: &dyn Names) -> String {
    let mut s = String::with_capacity(24);
    push_service_rule_label(&mut s, key, names);
    s
}

/// [`service_rule_label`] appended to `out`.
pub(crate) fn push_service_rule_label(out: &mut impl Text, key: &ServiceKey, names: &dyn Names) {
    match key {
        ServiceKey::Fwmark { mark, family } => {
            out.text("-f ");
            push_i64(out, i64::from(*mark as i32));
            if *family == AddressFamily::Inet6 {
                out.text(" -6");
            }
        }
        ServiceKey::Inet {
            protocol,
            addr,
            port,
        } => {
            out.text(protocol_switch(protocol));
            put_addr_port(out, addr, *port, lookup_protocol(key), names);
        }
    }
}

/// The switch of a service of `protocol` and a space: `-t `, `-u `,
/// `--sctp-service `.
fn protocol_switch(protocol: &Protocol) -> &'static str {
    match protocol {
        Protocol::Tcp => "-t ",
        Protocol::Udp => "-u ",
        Protocol::Sctp => "--sctp-service ",
        _ => "--xxx-service ",
    }
}

/// A service as an `-A` rule, as `ipvsadm -S` prints it (no newline).
///
/// ```
/// use ipvsnl::rules::{service_rule, Numeric};
/// use ipvsnl::{Scheduler, Service, ServiceKey};
/// let s = Service::new(ServiceKey::udp("10.0.0.1".parse().unwrap(), 53))
///     .with_scheduler(Scheduler::RoundRobin)
///     .with_persistence(300);
/// assert_eq!(service_rule(&s, &Numeric), "-A -u 10.0.0.1:53 -s rr -p 300");
/// ```
pub fn service_rule(svc: &Service, names: &dyn Names) -> String {
    service_line("-A", svc, names)
}

/// A service as a rule of command `cmd` (`-A` or `-E`): the one printer of
/// service settings, for `-S` and the dry run alike.
pub(crate) fn service_line(cmd: &str, svc: &Service, names: &dyn Names) -> String {
    let mut s = String::with_capacity(48);
    s.push_str(cmd);
    s.push(' ');
    push_service_rule_label(&mut s, &svc.key, names);
    push_service_settings(&mut s, svc);
    s
}

/// What a service rule says after its label: ` -s rr`, then persistence,
/// engine, one-packet and scheduler flags in ipvsadm's order.
fn push_service_settings(s: &mut impl Text, svc: &Service) {
    s.text(" -s ");
    s.text(svc.scheduler.name());
    if svc.flags.contains(ServiceFlags::PERSISTENT) {
        s.text(" -p ");
        push_u64(s, u64::from(svc.timeout));
        match svc.netmask {
            Netmask::V4(m) if u32::from(m) != u32::MAX => {
                s.text(" -M ");
                push_ipv4(s, &m);
            }
            Netmask::V6(p) if p != 128 => {
                s.text(" -M ");
                push_u64(s, u64::from(p));
            }
            _ => {}
        }
    }
    if let Some(pe) = &svc.persistence_engine {
        s.text(" --pe ");
        s.text(pe);
    }
    if svc.flags.contains(ServiceFlags::ONE_PACKET) {
        s.text(" -o");
    }
    let sched = ServiceFlags::SCHED1 | ServiceFlags::SCHED2 | ServiceFlags::SCHED3;
    if svc.flags.intersects(sched) {
        s.text(" -b ");
        push_sched_flag_names(s, &svc.scheduler, svc.flags);
    }
}

/// A destination of a service as an `-a` rule, as `ipvsadm -S` prints it
/// (no newline). Thresholds are not part of ipvsadm's rules.
///
/// ```
/// use ipvsnl::rules::{destination_rule, Numeric};
/// use ipvsnl::{Destination, Forward, ServiceKey};
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// let d = Destination::new("10.0.1.1".parse().unwrap(), 8080).with_weight(5);
/// assert_eq!(destination_rule(&key, &d, &Numeric), "-a -t 10.0.0.1:80 -r 10.0.1.1:8080 -m -w 5");
/// ```
pub fn destination_rule(key: &ServiceKey, dest: &Destination, names: &dyn Names) -> String {
    destination_line("-a", key, dest, names)
}

/// A whole table as a rules text, as `ipvsadm -S` prints one: each service
/// ([`service_rule`]) then its destinations ([`destination_rule`]), one
/// rule per line, each line ended.
///
/// ```
/// use ipvsnl::rules::{table_rules, Numeric};
/// use ipvsnl::sync::Table;
/// use ipvsnl::{Destination, Service, ServiceKey};
/// let mut t = Table::new();
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// t.insert(Service::new(key), [Destination::new("10.0.1.1".parse().unwrap(), 80)]);
/// assert_eq!(
///     table_rules(&t, &Numeric),
///     "-A -t 10.0.0.1:80 -s wlc\n-a -t 10.0.0.1:80 -r 10.0.1.1:80 -m -w 1\n"
/// );
/// ```
pub fn table_rules(table: &Table, names: &dyn Names) -> String {
    let mut text = String::new();
    for entry in table.iter() {
        push_service_rules(
            &mut text,
            &entry.service,
            entry.destinations.iter().map(|d| &d.destination),
            names,
        );
    }
    text
}

/// A service and its destinations as rules, appended to `out`: the
/// service's `-A` line ([`service_rule`]), then one `-a` line per
/// destination in the order given ([`destination_rule`]), each line ended.
/// What `ipvsadm -S` prints for one service, with its label printed once
/// for all its lines.
///
/// ```
/// use ipvsnl::rules::{push_service_rules, Numeric};
/// use ipvsnl::{Destination, Service, ServiceKey};
/// let svc = Service::new(ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80));
/// let dests = [Destination::new("10.0.1.1".parse().unwrap(), 80).with_weight(2)];
/// let mut text = String::new();
/// push_service_rules(&mut text, &svc, &dests, &Numeric);
/// assert_eq!(text, "-A -t 10.0.0.1:80 -s wlc\n-a -t 10.0.0.1:80 -r 10.0.1.1:80 -m -w 2\n");
/// ```
pub fn push_service_rules<'a>(
    out: &mut String,
    service: &Service,
    destinations: impl IntoIterator<Item = &'a Destination>,
    names: &dyn Names,
) {
    service_rules(out, service, destinations, names);
}

/// [`push_service_rules`] appended to bytes (UTF-8): for a program that
/// writes a large rules text out as bytes (each character appended costs
/// less than into a `String`).
///
/// ```
/// use ipvsnl::rules::{write_service_rules, Numeric};
/// use ipvsnl::{Service, ServiceKey};
/// let svc = Service::new(ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80));
/// let mut out = Vec::new();
/// write_service_rules(&mut out, &svc, [], &Numeric);
/// assert_eq!(out, b"-A -t 10.0.0.1:80 -s wlc\n");
/// ```
pub fn write_service_rules<'a>(
    out: &mut Vec<u8>,
    service: &Service,
    destinations: impl IntoIterator<Item = &'a Destination>,
    names: &dyn Names,
) {
    service_rules(out, service, destinations, names);
}

/// [`push_service_rules`] into any [`Text`].
fn service_rules<'a>(
    out: &mut impl Text,
    service: &Service,
    destinations: impl IntoIterator<Item = &'a Destination>,
    names: &dyn Names,
) {
    // The label is printed once, in the `-A` line, and copied from there
    // into each `-a` line: into the start of a line composed on the stack
    // (`-a LABEL -r `) when the rest of any line fits after it.
    let numeric = names.names_nothing();
    let mut line = [0u8; LINE];
    let (start, end) = match (&service.key, numeric) {
        (
            ServiceKey::Inet {
                protocol,
                addr: IpAddr::V4(a),
                port,
            },
            true,
        ) => {
            // `-A LABEL` composed on the stack too (and the label kept
            // there for the `-a` lines): 2.1 million instructions of the
            // 10,000 labels of the measure below appended piece by piece,
            // 1.4 million so.
            let switch = protocol_switch(protocol).as_bytes();
            line[..3].copy_from_slice(b"-A ");
            line[3..3 + switch.len()].copy_from_slice(switch);
            let n = put_ipv4_port(&mut line, 3 + switch.len(), a, *port);
            let start = out.len_bytes() + 3;
            out.line(&line, n);
            (start, start + n - 3)
        }
        _ => {
            out.text("-A ");
            let start = out.len_bytes();
            push_service_rule_label(out, &service.key, names);
            let end = out.len_bytes();
            let label = out.bytes_of(start, end);
            if let Some(room) = line.get_mut(3..3 + label.len()) {
                room.copy_from_slice(label);
            }
            (start, end)
        }
    };
    push_service_settings(out, service);
    out.ascii(b'\n');
    let protocol = lookup_protocol(&service.key);
    let head = 3 + (end - start) + 4;
    let composed = head + TAIL_ROOM <= LINE;
    if composed {
        line[..3].copy_from_slice(b"-a ");
        line[head - 4..head].copy_from_slice(b" -r ");
    }
    for dest in destinations {
        let (host, port_name) = if numeric {
            (None, None)
        } else {
            let host = names.host_name(&dest.addr);
            (host, protocol.and_then(|p| names.port_name(dest.port, p)))
        };
        if let (true, IpAddr::V4(a), None, None) = (composed, &dest.addr, &host, &port_name) {
            if !matches!(dest.forward, Forward::Tunnel(_)) {
                // (Measured on the host with `scripts/measure/ipvsadm-text-cost`, the
                // `-S` text of 10,000 x 5: 33.8 million instructions with
                // the label made in a `String` per service and each line
                // appended piece by piece, 19.1 million with the label
                // copied from the `-A` line and the rest composed on the
                // stack, 17.1 million so.)
                let len = put_tail(&mut line, head, a, dest);
                out.line(&line, len);
                continue;
            }
        }
        out.ascii_bytes(b"-a ");
        out.repeat_range(start, end);
        out.text(" -r ");
        push_named_destination_settings(out, dest, host, port_name, true);
    }
}

/// The room [`put_tail`] needs.
const TAIL_ROOM: usize = IPV4_PORT_ROOM + 7 + I32_ROOM + 1;

/// Writes the end of an `-a` line of an IPv4 destination whose host and
/// port have no names, not tunnelled (`addr:port -m -w 1` and a newline)
/// at `at` of `line` (which has [`TAIL_ROOM`] from there); returns where
/// it ends.
fn put_tail(line: &mut [u8; LINE], at: usize, a: &std::net::Ipv4Addr, dest: &Destination) -> usize {
    let mut i = put_ipv4_port(line, at, a, dest.port);
    line[i..i + 7].copy_from_slice(forward_switch(dest.forward).as_bytes());
    i = put_i32(line, i + 7, dest.weight as i32);
    line[i] = b'\n';
    i + 1
}

/// ` -m -w `, ` -i -w ` or ` -g -w `: the forwarding method's switch and
/// the weight's.
fn forward_switch(forward: Forward) -> &'static str {
    match forward {
        Forward::Masquerade => " -m -w ",
        Forward::Tunnel(_) => " -i -w ",
        _ => " -g -w ",
    }
}

/// A destination as a rule of command `cmd` (`-a` or `-e`): the one
/// printer of destination settings, for `-S` and the dry run alike.
pub(crate) fn destination_line(
    cmd: &str,
    key: &ServiceKey,
    dest: &Destination,
    names: &dyn Names,
) -> String {
    let mut s = String::with_capacity(64);
    s.push_str(cmd);
    s.push(' ');
    push_service_rule_label(&mut s, key, names);
    push_destination_settings(&mut s, lookup_protocol(key), dest, names, false);
    s
}

/// What a destination rule says after its service's label:
/// ` -r addr:port -m -w 1`, then the tunnel options; and a newline if
/// `newline`.
fn push_destination_settings(
    s: &mut impl Text,
    protocol: Option<&str>,
    dest: &Destination,
    names: &dyn Names,
    newline: bool,
) {
    let host = names.host_name(&dest.addr);
    let port_name = protocol.and_then(|p| names.port_name(dest.port, p));
    s.text(" -r ");
    push_named_destination_settings(s, dest, host, port_name, newline);
}

/// [`push_destination_settings`] after its ` -r `, the names looked up.
fn push_named_destination_settings(
    s: &mut impl Text,
    dest: &Destination,
    host: Option<String>,
    port_name: Option<String>,
    newline: bool,
) {
    put_named_addr_port(s, &dest.addr, dest.port, host, port_name);
    s.text(forward_switch(dest.forward));
    push_i64(s, i64::from(dest.weight as i32));
    if let Forward::Tunnel(t) = dest.forward {
        let flag = if t.flags.contains(TunnelFlags::REMCSUM) {
            " --tun-remcsum"
        } else if t.flags.contains(TunnelFlags::CSUM) {
            " --tun-csum"
        } else {
            " --tun-nocsum"
        };
        match t.kind {
            TunnelKind::Ipip => s.text(" --tun-type ipip"),
            TunnelKind::Gue => {
                s.text(" --tun-type gue --tun-port ");
                push_u64(s, u64::from(t.port));
                s.text(flag);
            }
            TunnelKind::Gre => {
                s.text(" --tun-type gre");
                s.text(flag);
            }
            TunnelKind::Other(_) => {}
        }
    }
    if newline {
        s.ascii(b'\n');
    }
}
