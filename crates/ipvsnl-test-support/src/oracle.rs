//! The table oracles of the kernel tests: the kernel's table through one
//! listing ([`kernel_table`]), and one that does not go through the
//! library's listing or planner at all: the table read from
//! `/proc/net/ip_vs` (its own text, parsed here) and the fewest requests
//! that bring it to a desired table ([`needed`]), counted from that.
//!
//! ```
//! use ipvsnl_test_support::oracle::parse_proc_ip_vs;
//! let text = "IP Virtual Server version 1.2.1 (size=4096)\n\
//!             Prot LocalAddress:Port Scheduler Flags\n  \
//!             -> RemoteAddress:Port Forward Weight ActiveConn InActConn\n\
//!             TCP  0A000001:0050 rr\n  \
//!             -> AC100001:0050      Masq    1      0          0\n";
//! let raw = parse_proc_ip_vs(text);
//! let svc = raw.values().next().unwrap();
//! assert_eq!(svc.scheduler, "rr");
//! assert_eq!(svc.destinations.len(), 1);
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipvsnl::sync::Table;
use ipvsnl::{AddressFamily, Client, ServiceFlags, ServiceKey};

/// The kernel's table as a [`Table`]: `Client::table` is whole while
/// other namespaces change theirs (the regression tests of that are in
/// `tests/kernel_listing_whole/whole.rs`), so one listing is the oracle.
pub fn kernel_table(c: &mut Client) -> Table {
    Table::from_entries(c.table().expect("list the table"))
}

/// Panics unless the kernel's table has the settings of `want`.
pub fn assert_converged(c: &mut Client, want: &Table) {
    let got = kernel_table(c);
    assert!(
        got.same_settings(want),
        "kernel holds {} services / {} destinations, wanted {} / {}",
        got.len(),
        got.destination_count(),
        want.len(),
        want.destination_count()
    );
}

/// A service as `/proc/net/ip_vs` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawService {
    /// The scheduler's name (`rr`, `wlc`...).
    pub scheduler: String,
    /// Whether the line says `persistent`.
    pub persistent: bool,
    /// (address, port) -> (forwarding method as the kernel names it, weight).
    pub destinations: BTreeMap<(IpAddr, u16), (String, u32)>,
}
/// The table as `/proc/net/ip_vs` shows it (thresholds, netmasks and
/// tunnel parameters are not in that file).
pub type RawTable = BTreeMap<ServiceKey, RawService>;

fn hex_v4(s: &str) -> Option<IpAddr> {
    u32::from_str_radix(s, 16)
        .ok()
        .map(|a| IpAddr::V4(Ipv4Addr::from(a)))
}

/// `0A000001:0050` (IPv4, hex) or `[2001:db8::1]:0050` (IPv6).
fn addr_port(s: &str) -> Option<(IpAddr, u16)> {
    let (addr, port) = s.rsplit_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let addr = match addr.strip_prefix('[').and_then(|a| a.strip_suffix(']')) {
        Some(v6) => IpAddr::V6(v6.parse::<Ipv6Addr>().ok()?),
        None => hex_v4(addr)?,
    };
    Some((addr, port))
}

fn bad<T>(line: &str) -> T {
    panic!("unreadable line of /proc/net/ip_vs: {line:?}")
}

/// Parses the text of `/proc/net/ip_vs`; panics naming a line it cannot
/// read.
pub fn parse_proc_ip_vs(text: &str) -> RawTable {
    let mut table = RawTable::new();
    let mut current: Option<ServiceKey> = None;
    for line in text.lines().skip(3) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields.as_slice() {
            ["->", ap, fwd, weight, ..] => {
                let key = current.unwrap_or_else(|| bad(line));
                let dest = addr_port(ap).unwrap_or_else(|| bad(line));
                let weight = weight.parse().unwrap_or_else(|_| bad(line));
                let svc = table.get_mut(&key).expect("the service just read");
                svc.destinations.insert(dest, (fwd.to_string(), weight));
            }
            [proto, ap, sched, rest @ ..] => {
                let key = if *proto == "FWM" {
                    let mark = u32::from_str_radix(ap, 16).unwrap_or_else(|_| bad(line));
                    ServiceKey::fwmark(mark, AddressFamily::Inet)
                } else {
                    let (addr, port) = addr_port(ap).unwrap_or_else(|| bad(line));
                    match *proto {
                        "TCP" => ServiceKey::tcp(addr, port),
                        "UDP" => ServiceKey::udp(addr, port),
                        "SCTP" => ServiceKey::sctp(addr, port),
                        _ => bad(line),
                    }
                };
                table.insert(
                    key,
                    RawService {
                        scheduler: sched.to_string(),
                        persistent: rest.contains(&"persistent"),
                        destinations: BTreeMap::new(),
                    },
                );
                current = Some(key);
            }
            [] => {}
            _ => bad(line),
        }
    }
    table
}

/// The fewest requests that bring a table to the desired one (within a
/// scope), by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Needed {
    /// Wanted services absent: one add each.
    pub missing_services: usize,
    /// Wanted destinations absent (those of absent services too): one add each.
    pub missing_destinations: usize,
    /// Services and destinations present with other settings: one edit each.
    pub wrong_settings: usize,
    /// Services in scope not wanted, and destinations not wanted of wanted
    /// services: one delete each.
    pub surplus: usize,
}

impl Needed {
    /// All the requests, of every kind.
    pub fn total(&self) -> usize {
        self.missing_services + self.missing_destinations + self.wrong_settings + self.surplus
    }
}

impl fmt::Display for Needed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} requests ({} services missing, {} destinations missing, {} wrong settings, {} surplus)",
            self.total(),
            self.missing_services,
            self.missing_destinations,
            self.wrong_settings,
            self.surplus
        )
    }
}

/// Counts what it takes to go from `raw` to `desired` for the services
/// `in_scope` accepts (settings compared as far as `/proc` shows them:
/// scheduler, persistence, forwarding method and weight).
pub fn needed(raw: &RawTable, desired: &Table, in_scope: impl Fn(&ServiceKey) -> bool) -> Needed {
    let mut n = Needed::default();
    for want in desired.iter().filter(|w| in_scope(&w.service.key)) {
        let Some(found) = raw.get(&want.service.key) else {
            n.missing_services += 1;
            n.missing_destinations += want.destinations.len();
            continue;
        };
        let persistent = want.service.flags.contains(ServiceFlags::PERSISTENT);
        if found.scheduler != want.service.scheduler.name() || found.persistent != persistent {
            n.wrong_settings += 1;
        }
        for d in &want.destinations {
            let d = &d.destination;
            match found.destinations.get(&(d.addr, d.port)) {
                None => n.missing_destinations += 1,
                Some((fwd, weight)) if *fwd != d.forward.to_string() || *weight != d.weight => {
                    n.wrong_settings += 1
                }
                Some(_) => {}
            }
        }
        n.surplus += found
            .destinations
            .keys()
            .filter(|(a, p)| want.destination(a, *p).is_none())
            .count();
    }
    n.surplus += raw
        .keys()
        .filter(|k| in_scope(k) && desired.get(k).is_none())
        .count();
    n
}
