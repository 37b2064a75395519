//! Printing services and destinations as rules (`ipvsadm -S` lines).

use super::style::{addr_port, lookup_protocol, sched_flag_names};
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
    match key {
        ServiceKey::Fwmark { mark, family } => {
            let six = if *family == AddressFamily::Inet6 {
                " -6"
            } else {
                ""
            };
            format!("-f {}{six}", *mark as i32)
        }
        ServiceKey::Inet {
            protocol,
            addr,
            port,
        } => {
            let switch = match protocol {
                Protocol::Tcp => "-t",
                Protocol::Udp => "-u",
                Protocol::Sctp => "--sctp-service",
                _ => "--xxx-service",
            };
            format!(
                "{switch} {}",
                addr_port(addr, *port, lookup_protocol(key), names)
            )
        }
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
    let mut s = format!(
        "{cmd} {} -s {}",
        service_rule_label(&svc.key, names),
        svc.scheduler.name()
    );
    if svc.flags.contains(ServiceFlags::PERSISTENT) {
        s.push_str(&format!(" -p {}", svc.timeout));
        match svc.netmask {
            Netmask::V4(m) if u32::from(m) != u32::MAX => s.push_str(&format!(" -M {m}")),
            Netmask::V6(p) if p != 128 => s.push_str(&format!(" -M {p}")),
            _ => {}
        }
    }
    if let Some(pe) = &svc.persistence_engine {
        s.push_str(&format!(" --pe {pe}"));
    }
    if svc.flags.contains(ServiceFlags::ONE_PACKET) {
        s.push_str(" -o");
    }
    let sched = ServiceFlags::SCHED1 | ServiceFlags::SCHED2 | ServiceFlags::SCHED3;
    if svc.flags.intersects(sched) {
        s.push_str(" -b ");
        s.push_str(&sched_flag_names(&svc.scheduler, svc.flags));
    }
    s
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
        text.push_str(&service_rule(&entry.service, names));
        text.push('\n');
        for d in &entry.destinations {
            text.push_str(&destination_rule(&entry.service.key, &d.destination, names));
            text.push('\n');
        }
    }
    text
}

/// A destination as a rule of command `cmd` (`-a` or `-e`): the one
/// printer of destination settings, for `-S` and the dry run alike.
pub(crate) fn destination_line(
    cmd: &str,
    key: &ServiceKey,
    dest: &Destination,
    names: &dyn Names,
) -> String {
    let switch = match dest.forward {
        Forward::Masquerade => "-m",
        Forward::Tunnel(_) => "-i",
        _ => "-g",
    };
    let mut s = format!(
        "{cmd} {} -r {} {switch} -w {}",
        service_rule_label(key, names),
        addr_port(&dest.addr, dest.port, lookup_protocol(key), names),
        dest.weight as i32
    );
    if let Forward::Tunnel(t) = dest.forward {
        let flag = if t.flags.contains(TunnelFlags::REMCSUM) {
            "--tun-remcsum"
        } else if t.flags.contains(TunnelFlags::CSUM) {
            "--tun-csum"
        } else {
            "--tun-nocsum"
        };
        match t.kind {
            TunnelKind::Ipip => s.push_str(" --tun-type ipip"),
            TunnelKind::Gue => s.push_str(&format!(" --tun-type gue --tun-port {} {flag}", t.port)),
            TunnelKind::Gre => s.push_str(&format!(" --tun-type gre {flag}")),
            TunnelKind::Other(_) => {}
        }
    }
    s
}
