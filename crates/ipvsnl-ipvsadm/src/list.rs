//! ipvsadm's listings, byte for byte.

use std::fmt::Write as _;
use std::net::IpAddr;

use ipvsnl::rules::style::{addr_port, lookup_protocol, sched_flag_names};
use ipvsnl::rules::{self, Names};

use crate::grammar::ListFormat;
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

fn cut(s: &mut String, n: usize) {
    if s.len() > n {
        let mut end = n;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
}

/// The service label of listings (`svc_name`): `TCP  addr:port` (IPv4 cut
/// at 33 bytes), `FWM  5`, `FWM  5 IPv6`.
pub(crate) fn service_label(key: &ServiceKey, names: &dyn Names) -> String {
    match key {
        ServiceKey::Fwmark { mark, family } => {
            let six = if *family == AddressFamily::Inet6 {
                " IPv6"
            } else {
                ""
            };
            format!("FWM  {}{six}", *mark as i32)
        }
        ServiceKey::Inet {
            protocol,
            addr,
            port,
        } => {
            let proto = match protocol {
                Protocol::Tcp => "TCP",
                Protocol::Udp => "UDP",
                Protocol::Sctp => "SCTP",
                _ => "?",
            };
            let mut s = format!(
                "{proto:<4} {}",
                addr_port(addr, *port, lookup_protocol(key), names)
            );
            if addr.is_ipv4() {
                cut(&mut s, 33);
            }
            s
        }
        _ => String::from("?"),
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
    let label = service_label(&svc.key, names);
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
        let _ = write!(out, "{label:<33}");
        for n in v {
            largenum(out, n, f.exact);
        }
        out.push('\n');
        return;
    }
    let _ = write!(out, "{label} {}", svc.scheduler.name());
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

/// One destination line.
pub(crate) fn dest_line(
    out: &mut String,
    key: &ServiceKey,
    de: &DestinationEntry,
    f: &ListFormat,
    names: &dyn Names,
) {
    let d = &de.destination;
    let mut dname = addr_port(&d.addr, d.port, lookup_protocol(key), names);
    if d.addr.is_ipv4() {
        cut(&mut dname, 28);
    }
    // libipvs reads the destination counters as 32-bit values, except bytes.
    let lo = |v: u64| u64::from(v as u32);
    let st = &de.stats;
    if f.stats {
        let _ = write!(out, "  -> {dname:<28}");
        for n in [
            lo(st.conns),
            lo(st.in_packets),
            lo(st.out_packets),
            st.in_bytes,
            st.out_bytes,
        ] {
            largenum(out, n, f.exact);
        }
        out.push('\n');
    } else if f.rate {
        let _ = write!(
            out,
            "  -> {dname:<28} {:>8} {:>8} {:>8}",
            lo(st.cps),
            lo(st.in_pps),
            lo(st.out_pps)
        );
        largenum(out, lo(st.in_bps), f.exact);
        largenum(out, lo(st.out_bps), f.exact);
        out.push('\n');
    } else if f.thresholds {
        let _ = writeln!(
            out,
            "  -> {dname:<28} {:<10} {:<10} {:<10} {:<10}",
            d.upper_threshold, d.lower_threshold, de.active_conns, de.inactive_conns
        );
    } else if f.persistent_conn {
        let _ = writeln!(
            out,
            "  -> {dname:<28} {:<9} {:<11} {:<10} {:<10}",
            d.weight, de.persistent_conns, de.active_conns, de.inactive_conns
        );
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
        let _ = writeln!(
            out,
            "  -> {dname:<28} {:<7} {info:<13} {:<6} {:<10} {:<10}",
            fwd_name(&d.forward),
            d.weight as i32,
            de.active_conns,
            de.inactive_conns
        );
    } else {
        let _ = writeln!(
            out,
            "  -> {dname:<28} {:<7} {:<6} {:<10} {:<10}",
            fwd_name(&d.forward),
            d.weight as i32,
            de.active_conns,
            de.inactive_conns
        );
    }
}

/// A service and its destinations as rules (`-S`).
pub(crate) fn save_service(
    out: &mut String,
    se: &ServiceEntry,
    dests: &[DestinationEntry],
    names: &dyn Names,
) {
    out.push_str(&rules::service_rule(&se.service, names));
    out.push('\n');
    for d in dests {
        out.push_str(&rules::destination_rule(
            &se.service.key,
            &d.destination,
            names,
        ));
        out.push('\n');
    }
}

/// glibc's `qsort` on this platform: a top-down merge sort (left half of
/// n/2 elements, ties taken from the left). Reproduced because ipvsadm's
/// comparators are not a consistent order.
pub(crate) fn glibc_msort<T: Clone>(v: &mut [T], cmp: &dyn Fn(&T, &T) -> i32) {
    let n = v.len();
    if n <= 1 {
        return;
    }
    let n1 = n / 2;
    glibc_msort(&mut v[..n1], cmp);
    glibc_msort(&mut v[n1..], cmp);
    let mut merged = Vec::with_capacity(n);
    let (mut i, mut j) = (0, n1);
    while i < n1 && j < n {
        if cmp(&v[i], &v[j]) <= 0 {
            merged.push(v[i].clone());
            i += 1;
        } else {
            merged.push(v[j].clone());
            j += 1;
        }
    }
    merged.extend_from_slice(&v[i..n1]);
    merged.extend_from_slice(&v[j..n]);
    v.clone_from_slice(&merged);
}

fn addr_words(a: &IpAddr) -> [u32; 4] {
    match a {
        IpAddr::V4(a) => [u32::from(*a), 0, 0, 0],
        IpAddr::V6(a) => {
            let o = a.octets();
            let w = |i: usize| u32::from_be_bytes([o[i], o[i + 1], o[i + 2], o[i + 3]]);
            [w(0), w(4), w(8), w(12)]
        }
    }
}

fn addr_cmp(a: &IpAddr, b: &IpAddr) -> i32 {
    let (wa, wb) = (addr_words(a), addr_words(b));
    let n = if a.is_ipv6() { 4 } else { 1 };
    for i in 0..n {
        let r = wa[i].wrapping_sub(wb[i]) as i32;
        if r != 0 {
            return r;
        }
    }
    0
}

struct SvcSortKey {
    fwmark: u32,
    af: i32,
    protocol: i32,
    addr: IpAddr,
    port: i32,
}

fn svc_sort_key(k: &ServiceKey) -> SvcSortKey {
    match k {
        ServiceKey::Fwmark { mark, family } => SvcSortKey {
            fwmark: *mark,
            af: i32::from(family.to_raw()),
            protocol: 0,
            addr: match family {
                AddressFamily::Inet6 => IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED),
                _ => IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED),
            },
            port: 0,
        },
        ServiceKey::Inet {
            protocol,
            addr,
            port,
        } => SvcSortKey {
            fwmark: 0,
            af: i32::from(AddressFamily::of(addr).to_raw()),
            protocol: i32::from(protocol.to_raw()),
            addr: *addr,
            port: i32::from(*port),
        },
        _ => SvcSortKey {
            fwmark: 0,
            af: 0,
            protocol: 0,
            addr: IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED),
            port: 0,
        },
    }
}

/// ipvsadm's `ipvs_cmp_services`.
pub(crate) fn cmp_services(a: &ServiceKey, b: &ServiceKey) -> i32 {
    let (a, b) = (svc_sort_key(a), svc_sort_key(b));
    let r = a.fwmark.wrapping_sub(b.fwmark) as i32;
    if r != 0 {
        return r;
    }
    let r = a.af - b.af;
    if r != 0 {
        return r;
    }
    let r = a.protocol - b.protocol;
    if r != 0 {
        return r;
    }
    let r = if a.af == i32::from(AddressFamily::Inet6.to_raw()) {
        addr_cmp(&a.addr, &b.addr)
    } else {
        (addr_words(&a.addr)[0].wrapping_sub(addr_words(&b.addr)[0])) as i32
    };
    if r != 0 {
        return r;
    }
    a.port - b.port
}

/// ipvsadm's `ipvs_cmp_dests` (the first argument's family picks the
/// address comparison).
pub(crate) fn cmp_dests(a: &DestinationEntry, b: &DestinationEntry) -> i32 {
    let (da, db) = (&a.destination, &b.destination);
    let r = addr_cmp(&da.addr, &db.addr);
    if r != 0 {
        return r;
    }
    i32::from(da.port) - i32::from(db.port)
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
