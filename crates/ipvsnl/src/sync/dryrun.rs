//! A plan shown as ipvsadm rules (the `-R` input format).

use std::fmt::Write;
use std::net::{IpAddr, Ipv4Addr};

use crate::{
    AddressFamily, Destination, Forward, Netmask, Protocol, Request, Scheduler, Service,
    ServiceFlags, ServiceKey, TunnelFlags, TunnelKind,
};

/// The requests as ipvsadm rules, one a line. Requests that have no
/// ipvsadm rule form (none the planner makes) are shown as comments.
pub(crate) fn rules(requests: &[Request]) -> String {
    let mut out = String::with_capacity(requests.len() * 48);
    for r in requests {
        write_rule(&mut out, r);
        out.push('\n');
    }
    out
}

/// One request as one ipvsadm rule (no newline).
///
/// ```
/// use ipvsnl::sync::rule;
/// use ipvsnl::{Destination, Request, ServiceKey};
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// let r = Request::AddDestination(key, Destination::new("172.16.0.1".parse().unwrap(), 80));
/// assert_eq!(rule(&r), "-a -t 10.0.0.1:80 -r 172.16.0.1:80 -m -w 1");
/// ```
pub fn rule(request: &Request) -> String {
    let mut s = String::new();
    write_rule(&mut s, request);
    s
}

fn write_rule(out: &mut String, r: &Request) {
    match r {
        Request::AddService(s) => service_rule(out, "-A", s),
        Request::EditService(s) => service_rule(out, "-E", s),
        Request::DeleteService(k) => {
            out.push_str("-D ");
            key_arg(out, k);
        }
        Request::AddDestination(k, d) => dest_rule(out, "-a", k, d),
        Request::EditDestination(k, d) => dest_rule(out, "-e", k, d),
        Request::DeleteDestination(k, a, p) => {
            out.push_str("-d ");
            key_arg(out, k);
            out.push_str(" -r ");
            addr_port(out, a, *p);
        }
        Request::Flush => out.push_str("-C"),
        Request::Zero(None) => out.push_str("-Z"),
        Request::Zero(Some(k)) => {
            out.push_str("-Z ");
            key_arg(out, k);
        }
        other => {
            let _ = write!(out, "# {other}");
        }
    }
}

fn addr_port(out: &mut String, a: &IpAddr, port: u16) {
    let _ = match a {
        IpAddr::V4(a) => write!(out, "{a}:{port}"),
        IpAddr::V6(a) => write!(out, "[{a}]:{port}"),
    };
}

fn key_arg(out: &mut String, k: &ServiceKey) {
    match k {
        ServiceKey::Inet {
            protocol,
            addr,
            port,
        } => {
            out.push_str(match protocol {
                Protocol::Udp => "-u ",
                Protocol::Sctp => "--sctp-service ",
                _ => "-t ",
            });
            addr_port(out, addr, *port);
        }
        ServiceKey::Fwmark { mark, family } => {
            let _ = write!(out, "-f {mark}");
            if *family == AddressFamily::Inet6 {
                out.push_str(" -6");
            }
        }
    }
}

fn service_rule(out: &mut String, cmd: &str, s: &Service) {
    out.push_str(cmd);
    out.push(' ');
    key_arg(out, &s.key);
    let _ = write!(out, " -s {}", s.scheduler);
    if s.flags.contains(ServiceFlags::PERSISTENT) {
        let _ = write!(out, " -p {}", s.timeout);
        match s.netmask {
            Netmask::V4(m) if m != Ipv4Addr::BROADCAST => {
                let _ = write!(out, " -M {m}");
            }
            Netmask::V6(p) if p != 128 => {
                let _ = write!(out, " -M {p}");
            }
            _ => {}
        }
    }
    if let Some(pe) = &s.persistence_engine {
        let _ = write!(out, " --pe {pe}");
    }
    if s.flags.contains(ServiceFlags::ONE_PACKET) {
        out.push_str(" -o");
    }
    let sched_flags = [
        (ServiceFlags::SCHED1, "flag-1", "sh-fallback", "mh-fallback"),
        (ServiceFlags::SCHED2, "flag-2", "sh-port", "mh-port"),
        (ServiceFlags::SCHED3, "flag-3", "flag-3", "flag-3"),
    ];
    let names: Vec<&str> = sched_flags
        .iter()
        .filter(|f| s.flags.contains(f.0))
        .map(|f| match s.scheduler {
            Scheduler::SourceHashing => f.2,
            Scheduler::Maglev => f.3,
            _ => f.1,
        })
        .collect();
    if !names.is_empty() {
        let _ = write!(out, " -b {}", names.join(","));
    }
}

fn dest_rule(out: &mut String, cmd: &str, k: &ServiceKey, d: &Destination) {
    out.push_str(cmd);
    out.push(' ');
    key_arg(out, k);
    out.push_str(" -r ");
    addr_port(out, &d.addr, d.port);
    out.push_str(match d.forward {
        Forward::Masquerade => " -m",
        Forward::Tunnel(_) => " -i",
        _ => " -g",
    });
    let _ = write!(out, " -w {}", d.weight);
    if d.upper_threshold != 0 {
        let _ = write!(out, " -x {}", d.upper_threshold);
    }
    if d.lower_threshold != 0 {
        let _ = write!(out, " -y {}", d.lower_threshold);
    }
    if let Forward::Tunnel(t) = d.forward {
        let csum = if t.flags.contains(TunnelFlags::REMCSUM) {
            " --tun-remcsum"
        } else if t.flags.contains(TunnelFlags::CSUM) {
            " --tun-csum"
        } else {
            " --tun-nocsum"
        };
        match t.kind {
            TunnelKind::Gue => {
                let _ = write!(out, " --tun-type gue --tun-port {}{csum}", t.port);
            }
            TunnelKind::Gre => {
                let _ = write!(out, " --tun-type gre{csum}");
            }
            _ => out.push_str(" --tun-type ipip"),
        }
    }
}
