//! ipvsadm's listings, byte for byte.

use std::fmt::Write as _;

use ipvsnl::rules::style::{lookup_protocol, push_addr_port, sched_flag_names};
use ipvsnl::rules::{self, Names};

use crate::columns::{pad_from, push_i64, push_left};
use crate::grammar::ListFormat;
use crate::sort::{self, DestSorter};
use ipvsnl::{
    AddressFamily, DestinationEntry, Forward, Netmask, Protocol, ServiceEntry, ServiceFlags,
    ServiceKey, TunnelKind,
};

/// ipvsadm's `print_largenum`: a right-aligned number with its own leading
/// space, abbreviated with K/M/G/T unless `--exact`.
pub(crate) fn largenum(out: &mut String, n: u64, exact: bool) {
    if exact {
        let digits = n.to_string();
        let width = if digits.len() > 8 {
            digits.len() + 1
        } else {
            9
        };
        let _ = write!(out, "{n:>width$}");
    } else if n >= 100_000_000_000_000 {
        let _ = write!(out, " {:>7}T", n / 1_000_000_000_000);
    } else if n >= 100_000_000_000 {
        let _ = write!(out, " {:>7}G", n / 1_000_000_000);
    } else if n >= 1_000_000_000 {
        let _ = write!(out, " {:>7}M", n / 1_000_000);
    } else if n >= 100_000_000 {
        let _ = write!(out, " {:>7}K", n / 1000);
    } else {
        let _ = write!(out, " {n:>8}");
    }
}

/// The column titles of a listing.
pub(crate) fn title(out: &mut String, f: &ListFormat) {
    let p = "Prot LocalAddress:Port";
    if f.stats {
        let _ = writeln!(
            out,
            "{p:<33} {:>8} {:>8} {:>8} {:>8} {:>8}\n  -> RemoteAddress:Port",
            "Conns", "InPkts", "OutPkts", "InBytes", "OutBytes"
        );
    } else if f.rate {
        let _ = writeln!(
            out,
            "{p:<33} {:>8} {:>8} {:>8} {:>8} {:>8}\n  -> RemoteAddress:Port",
            "CPS", "InPPS", "OutPPS", "InBPS", "OutBPS"
        );
    } else if f.thresholds {
        let _ = writeln!(
            out,
            "{p:<33} {:<10} {:<10} {:<10} {:<10}\n  -> RemoteAddress:Port",
            "Uthreshold", "Lthreshold", "ActiveConn", "InActConn"
        );
    } else if f.persistent_conn {
        let _ = writeln!(
            out,
            "{p:<33} {:<9} {:<11} {:<10} {:<10}\n  -> RemoteAddress:Port",
            "Weight", "PersistConn", "ActiveConn", "InActConn"
        );
    } else if f.tun_info {
        out.push_str("Prot LocalAddress:Port Scheduler Flags\n");
        out.push_str(
            "  -> RemoteAddress:Port           Forward TunnelInfo    Weight ActiveConn InActConn\n",
        );
    } else {
        out.push_str("Prot LocalAddress:Port Scheduler Flags\n");
        out.push_str("  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n");
    }
}

/// Cuts what was appended since `start` to at most `max` bytes, never
/// inside a character (C's fixed buffers).
fn cut_from(out: &mut String, start: usize, max: usize) {
    if out.len() > start + max {
        let mut end = start + max;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
    }
}

/// The service label of listings (`svc_name`), appended: `TCP  addr:port`
/// (IPv4 cut at 33 bytes), `FWM  5`, `FWM  5 IPv6`.
pub(crate) fn push_service_label(out: &mut String, key: &ServiceKey, names: &dyn Names) {
    let start = out.len();
    match key {
        ServiceKey::Fwmark { mark, family } => {
            out.push_str("FWM  ");
            push_i64(out, i64::from(*mark as i32));
            if *family == AddressFamily::Inet6 {
                out.push_str(" IPv6");
            }
        }
        ServiceKey::Inet {
            protocol,
            addr,
            port,
        } => {
            out.push_str(match protocol {
                Protocol::Tcp => "TCP  ",
                Protocol::Udp => "UDP  ",
                Protocol::Sctp => "SCTP ",
                _ => "?    ",
            });
            push_addr_port(out, addr, *port, lookup_protocol(key), names);
            if addr.is_ipv4() {
                cut_from(out, start, 33);
            }
        }
        _ => out.push('?'),
    }
}

fn fwd_name(f: &Forward) -> &'static str {
    match f {
        Forward::Masquerade => "Masq",
        Forward::Local => "Local",
        Forward::Tunnel(_) => "Tunnel",
        Forward::Route => "Route",
        _ => "(null)",
    }
}

/// One service line.
pub(crate) fn service_line(out: &mut String, se: &ServiceEntry, f: &ListFormat, names: &dyn Names) {
    let svc = &se.service;
    let start = out.len();
    push_service_label(out, &svc.key, names);
    if f.stats || f.rate {
        let st = &se.stats;
        let v = if f.stats {
            [
                st.conns,
                st.in_packets,
                st.out_packets,
                st.in_bytes,
                st.out_bytes,
            ]
        } else {
            [st.cps, st.in_pps, st.out_pps, st.in_bps, st.out_bps]
        };
        pad_from(out, start, 33);
        for n in v {
            largenum(out, n, f.exact);
        }
        out.push('\n');
        return;
    }
    out.push(' ');
    out.push_str(svc.scheduler.name());
    let sched = ServiceFlags::SCHED1 | ServiceFlags::SCHED2 | ServiceFlags::SCHED3;
    if svc.flags.intersects(sched) {
        let _ = write!(out, " ({})", sched_flag_names(&svc.scheduler, svc.flags));
    }
    if svc.flags.contains(ServiceFlags::PERSISTENT) {
        let _ = write!(out, " persistent {}", svc.timeout);
        match svc.netmask {
            Netmask::V4(m) if u32::from(m) != u32::MAX => {
                let _ = write!(out, " mask {m}");
            }
            Netmask::V6(p) if p != 128 => {
                let _ = write!(out, " mask {p}");
            }
            _ => {}
        }
        if let Some(pe) = &svc.persistence_engine {
            let _ = write!(out, " pe {pe}");
        }
    }
    if svc.flags.contains(ServiceFlags::ONE_PACKET) {
        out.push_str(" ops");
    }
    out.push('\n');
}

/// Appends `  -> addr:port` padded to its column (IPv4 cut at 28 bytes).
fn push_dest_name(out: &mut String, key: &ServiceKey, d: &ipvsnl::Destination, names: &dyn Names) {
    out.push_str("  -> ");
    let start = out.len();
    push_addr_port(out, &d.addr, d.port, lookup_protocol(key), names);
    if d.addr.is_ipv4() {
        cut_from(out, start, 28);
    }
    pad_from(out, start, 28);
}

/// Appends ` text` left-aligned in `width` characters.
fn push_field(out: &mut String, text: &str, width: usize) {
    out.push(' ');
    let start = out.len();
    out.push_str(text);
    pad_from(out, start, width);
}

/// Appends ` n` left-aligned in `width` characters.
fn push_number(out: &mut String, n: i64, width: usize) {
    out.push(' ');
    push_left(out, n, width);
}

/// One destination line.
pub(crate) fn dest_line(
    out: &mut String,
    key: &ServiceKey,
    de: &DestinationEntry,
    f: &ListFormat,
    names: &dyn Names,
) {
    let d = &de.destination;
    push_dest_name(out, key, d, names);
    // libipvs reads the destination counters as 32-bit values, except bytes.
    let lo = |v: u64| u64::from(v as u32);
    let st = &de.stats;
    let active = i64::from(de.active_conns);
    let inactive = i64::from(de.inactive_conns);
    if f.stats {
        for n in [
            lo(st.conns),
            lo(st.in_packets),
            lo(st.out_packets),
            st.in_bytes,
            st.out_bytes,
        ] {
            largenum(out, n, f.exact);
        }
    } else if f.rate {
        let _ = write!(
            out,
            " {:>8} {:>8} {:>8}",
            lo(st.cps),
            lo(st.in_pps),
            lo(st.out_pps)
        );
        largenum(out, lo(st.in_bps), f.exact);
        largenum(out, lo(st.out_bps), f.exact);
    } else if f.thresholds {
        push_number(out, i64::from(d.upper_threshold), 10);
        push_number(out, i64::from(d.lower_threshold), 10);
        push_number(out, active, 10);
        push_number(out, inactive, 10);
    } else if f.persistent_conn {
        push_number(out, i64::from(d.weight), 9);
        push_number(out, i64::from(de.persistent_conns), 11);
        push_number(out, active, 10);
        push_number(out, inactive, 10);
    } else if f.tun_info {
        let info = match &d.forward {
            Forward::Tunnel(t) => {
                let flags = match t.flags.bits() {
                    0 => "-c",
                    1 => "+c",
                    2 => "r+c",
                    _ => "",
                };
                match t.kind {
                    TunnelKind::Ipip => "ipip".to_owned(),
                    TunnelKind::Gue => format!("gue:{}:{flags}", t.port),
                    TunnelKind::Gre => format!("gre:{flags}"),
                    _ => String::new(),
                }
            }
            _ => "n/a".to_owned(),
        };
        push_field(out, fwd_name(&d.forward), 7);
        push_field(out, &info, 13);
        push_number(out, i64::from(d.weight as i32), 6);
        push_number(out, active, 10);
        push_number(out, inactive, 10);
    } else {
        push_field(out, fwd_name(&d.forward), 7);
        push_number(out, i64::from(d.weight as i32), 6);
        push_number(out, active, 10);
        push_number(out, inactive, 10);
    }
    out.push('\n');
}

/// A listed table as `-S` prints it: services and each one's destinations
/// in ipvsadm's order (the kernel's with `--nosort`), as rules, appended
/// to bytes (UTF-8) for stdout.
pub(crate) fn save_table(
    out: &mut Vec<u8>,
    table: &[ServiceEntry],
    f: &ListFormat,
    names: &dyn Names,
) {
    let mut dests = DestSorter::default();
    for &i in &sort::services(table, f.nosort) {
        let se = &table[i as usize];
        let order = dests.order(&se.destinations, f.nosort);
        rules::write_service_rules(
            out,
            &se.service,
            order
                .iter()
                .map(|&j| &se.destinations[j as usize].destination),
            names,
        );
    }
}

/// A listed table as `-L` prints it after its titles: each service line
/// and its destination lines, in ipvsadm's order (the kernel's with
/// `--nosort`).
pub(crate) fn list_table(
    out: &mut String,
    table: &[ServiceEntry],
    f: &ListFormat,
    names: &dyn Names,
) {
    let mut dests = DestSorter::default();
    for &i in &sort::services(table, f.nosort) {
        let se = &table[i as usize];
        service_line(out, se, f, names);
        for &j in dests.order(&se.destinations, f.nosort) {
            dest_line(out, &se.service.key, &se.destinations[j as usize], f, names);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn largenum_thresholds() {
        let f = |n| {
            let mut s = String::new();
            largenum(&mut s, n, false);
            s
        };
        assert_eq!(f(99_999_999), " 99999999");
        assert_eq!(f(100_000_000), "  100000K");
        assert_eq!(f(999_999_999), "  999999K");
        assert_eq!(f(1_000_000_000), "    1000M");
        assert_eq!(f(99_999_999_999), "   99999M");
        assert_eq!(f(100_000_000_000), "     100G");
        assert_eq!(f(100_000_000_000_000), "     100T");
        let mut s = String::new();
        largenum(&mut s, 99_999_999_999, true);
        assert_eq!(s, " 99999999999");
    }
}
