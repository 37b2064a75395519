//! A `virtual_server` converted into the agent's `[[service]]`s: one for
//! an address and port or a firewall mark, one per member for a `group`;
//! its scheduler, flags, persistence, sorry server, quorum and real
//! servers, and the checks' settings its servers inherit.

use std::net::IpAddr;

use crate::import::forward::{self, method, Method};
use crate::import::group::{Groups, Key};
use crate::import::keywords::VIRTUAL_SERVER;
use crate::import::numbers::uint;
use crate::import::output::{OutService, Table, Val};
use crate::import::report::{NoteKind, Place, Report};
use crate::import::server::{real_server, Server};
use crate::import::timing::Timing;
use crate::import::tree::Node;

/// keepalived's `persistence_timeout` without a value.
const PERSISTENCE_DEFAULT: u64 = 360;

/// The services of `node`.
pub(crate) fn virtual_server(node: &Node, groups: &Groups, report: &mut Report) -> Vec<OutService> {
    let at = node.at();
    let keys: Vec<(Key, Option<Place>)> = match (node.arg(0), node.arg(1)) {
        (Some("fwmark"), Some(_)) => match uint(node, 1, 1, u64::from(u32::MAX), report) {
            Some(n) => vec![(Key::Mark(u32::try_from(n).unwrap_or(u32::MAX)), None)],
            None => return Vec::new(),
        },
        (Some("group"), Some(name)) => match groups.get(name) {
            Some(members) => members.iter().map(|(k, p)| (*k, Some(p.clone()))).collect(),
            None => {
                report.error(at, format!("no `virtual_server_group {name}` is defined"));
                return Vec::new();
            }
        },
        (Some(a), Some(_)) => match a.parse::<IpAddr>() {
            Ok(ip) => match uint(node, 1, 0, 65535, report) {
                Some(p) => vec![(Key::Addr(ip, u16::try_from(p).unwrap_or(0)), None)],
                None => return Vec::new(),
            },
            Err(_) => {
                report.error(at, format!("`virtual_server`: {a:?} is not an IP address"));
                return Vec::new();
            }
        },
        _ => {
            report.error(
                at,
                "`virtual_server` takes `IP PORT`, `fwmark N` or `group NAME`",
            );
            return Vec::new();
        }
    };
    if node.block.is_none() {
        report.error(at, "`virtual_server` needs a `{ }` block");
        return Vec::new();
    }
    report.mapped(at);
    let s = settings(node, report);
    let any_mark = keys.iter().any(|(k, _)| matches!(k, Key::Mark(_)));
    let mut servers: Vec<Server> = Vec::new();
    for rs in node.children().iter().filter(|c| c.name() == "real_server") {
        if rs.block.is_none() && rs.args.len() < 2 {
            report.error(
                rs.at(),
                "`real_server` takes an address, a port and a `{ }` block",
            );
        }
        if let Some(srv) = real_server(rs, &s.method, &s.timing, s.inhibit, any_mark, report) {
            servers.push(srv);
        }
    }
    if servers.iter().any(|x| x.inhibit) && !servers.iter().all(|x| x.inhibit) {
        report.note(
            at,
            NoteKind::Changed,
            "only some real servers have `inhibit_on_failure`: the agent's choice is the \
             service's, `remove_after_drain = true` (a failed server is removed once drained)",
        );
    }
    check_servers(&s, &keys, &servers, report);
    if servers.is_empty() {
        report.note(
            at,
            NoteKind::NotSupported,
            "a virtual server without a real server: the agent needs one; no service written",
        );
        return Vec::new();
    }
    let mut out = Vec::new();
    for (key, member) in &keys {
        out.push(service(node, *key, member.as_ref(), &s, &servers, report));
    }
    out
}

/// What the lines of a virtual server set, besides its real servers.
#[derive(Default)]
struct Settings {
    method: Method,
    timing: Timing,
    inhibit: bool,
    protocol: Option<(String, Place)>,
    family: Option<String>,
    table: Table,
    persistence: Option<(u64, Place)>,
    granularity: Option<(String, Place)>,
    engine: Option<String>,
    sorry: Option<(IpAddr, Option<u64>, Place)>,
    sorry_method: Option<Method>,
    quorum: Option<(u64, Place)>,
}

fn settings(node: &Node, report: &mut Report) -> Settings {
    let mut s = Settings::default();
    let mut sched: Option<String> = None;
    let mut flags: Vec<(String, Place)> = Vec::new();
    for c in node.children() {
        let name = c.name();
        let at = c.at().clone();
        if !VIRTUAL_SERVER.contains(&name) {
            report.error(
                &at,
                format!("`{name}` is not a keyword of a `virtual_server` (keepalived 2.2.7)"),
            );
            continue;
        }
        if name == "real_server" || s.timing.take(c, report) {
            continue;
        }
        // Mapped as they are (the flags once named, below).
        if matches!(
            name,
            "lb_algo"
                | "lvs_sched"
                | "lb_kind"
                | "lvs_method"
                | "sorry_server_lvs_method"
                | "ops"
                | "protocol"
                | "ip_family"
                | "persistence_timeout"
                | "persistence_granularity"
                | "persistence_engine"
                | "inhibit_on_failure"
                | "sorry_server"
                | "quorum"
        ) {
            report.mapped(&at);
        }
        match name {
            "lb_algo" | "lvs_sched" => match c.arg(0) {
                Some(a) if ipvsnl::Scheduler::new(a).is_ok_and(|x| !matches!(x, ipvsnl::Scheduler::Other(_))) => {
                    sched = Some(a.to_string());
                }
                other => report.error(&at, format!("`{name}`: unknown scheduler {}", other.unwrap_or("(none)"))),
            },
            "lb_kind" | "lvs_method" => {
                if let Some(m) = method(c, report) {
                    s.method = m;
                }
            }
            "sorry_server_lvs_method" => s.sorry_method = method(c, report),
            "ops" => s.table.set("one_packet", Val::Bool(true)),
            "hashed" => report.note(&at, NoteKind::NotSupported, "`hashed`: the kernel hashes every service; left out"),
            "flag-1" | "flag-2" | "flag-3" | "sh-port" | "sh-fallback" | "mh-port" | "mh-fallback" => flags.push((name.to_string(), at)),
            "protocol" => match c.arg(0).map(str::to_ascii_lowercase).as_deref() {
                Some(p @ ("tcp" | "udp" | "sctp")) => s.protocol = Some((p.to_string(), at)),
                other => report.error(&at, format!("`protocol`: unknown protocol {} (TCP, UDP, SCTP)", other.unwrap_or("(none)"))),
            },
            "ip_family" => match c.arg(0) {
                Some("inet") => s.family = Some("inet".into()),
                Some("inet6") => s.family = Some("inet6".into()),
                other => report.error(&at, format!("`ip_family`: {} is not inet or inet6", other.unwrap_or("(none)"))),
            },
            "persistence_timeout" => {
                let t = if c.args.is_empty() { Some(PERSISTENCE_DEFAULT) } else { uint(c, 0, 1, u64::from(u32::MAX), report) };
                if let Some(t) = t {
                    s.persistence = Some((t, at));
                }
            }
            "persistence_granularity" => match c.arg(0) {
                Some(g) => s.granularity = Some((g.to_string(), at)),
                None => report.error(&at, "`persistence_granularity` needs a netmask"),
            },
            "persistence_engine" => s.engine = c.arg(0).map(str::to_string),
            "inhibit_on_failure" => s.inhibit = true,
            "sorry_server" => match (c.arg(0).map(str::parse::<IpAddr>), c.arg(1)) {
                (Some(Ok(ip)), p) => {
                    let port = match p {
                        Some(_) => uint(c, 1, 0, 65535, report),
                        None => None,
                    };
                    s.sorry = Some((ip, port, at));
                }
                _ => report.error(&at, "`sorry_server` takes an IP address and a port"),
            },
            "sorry_server_inhibit" => report.note(&at, NoteKind::Changed, "`sorry_server_inhibit`: the agent never checks the sorry server, so never inhibits it"),
            "quorum" => s.quorum = uint(c, 0, 1, u64::from(u32::MAX), report).map(|q| (q, at)),
            "hysteresis" => report.note(&at, NoteKind::NotSupported, "`hysteresis`: the agent's quorum has none: the service is below it as soon as the healthy weight is"),
            "quorum_up" | "quorum_down" => report.note(&at, NoteKind::NotSupported, format!("`{name}`: the agent runs no script; the quorum's transitions are logged and counted (`ipvs_agent_transitions_total`)")),
            "omega" => report.note(&at, NoteKind::NotSupported, "`omega`: the agent runs no script when a service goes"),
            "ha_suspend" => report.note(&at, NoteKind::Outside, "`ha_suspend`: in the fleet mode (`ipvs-agent run --etcd URL`) every director checks its servers; the leader holds the VIPs"),
            "smtp_alert" | "snmp_name" | "weight" => report.note(&at, NoteKind::NotSupported, format!("`{name}`: the agent has no such setting; left out")),
            _ => report.note(&at, NoteKind::NotSupported, format!("`{name}`: left out")),
        }
    }
    if let Some(n) = &sched {
        s.table.set("scheduler", Val::Str(n.clone()));
    }
    let sched = sched.unwrap_or_else(|| "wlc".into());
    let mut names = Vec::new();
    for (f, at) in flags {
        let owner = if f.starts_with("sh") {
            "sh"
        } else if f.starts_with("mh") {
            "mh"
        } else {
            sched.as_str()
        };
        let named = match (f.as_str(), owner) {
            ("flag-1", "sh") => Some("sh-fallback"),
            ("flag-2", "sh") => Some("sh-port"),
            ("flag-1", "mh") => Some("mh-fallback"),
            ("flag-2", "mh") => Some("mh-port"),
            ("sh-port" | "sh-fallback" | "mh-port" | "mh-fallback", _) if owner == sched => {
                Some(f.as_str())
            }
            _ => None,
        };
        match named {
            Some(n) => {
                report.mapped(&at);
                names.push(n.to_string());
            }
            None => report.note(
                &at,
                NoteKind::NotSupported,
                format!(
                    "`{f}`: not a flag of the {sched} scheduler (the kernel ignores it); left out"
                ),
            ),
        }
    }
    if !names.is_empty() {
        s.table.set("scheduler_flags", Val::Strs(names));
    }
    s
}

/// One service of the virtual server, of key `key`.
fn service(
    node: &Node,
    key: Key,
    member: Option<&Place>,
    s: &Settings,
    servers: &[Server],
    report: &mut Report,
) -> OutService {
    let mut t = Table {
        origin: Some(member.unwrap_or(node.at()).clone()),
        ..Table::default()
    };
    t.comment(match member {
        Some(m) => format!(
            "virtual_server {} {}, {} (group member, {m})",
            node.arg(0).unwrap_or(""),
            node.arg(1).unwrap_or(""),
            node.at()
        ),
        None => format!("virtual_server, {}", node.at()),
    });
    let v6 = match key {
        Key::Addr(ip, port) => {
            let proto = s.protocol.as_ref().map_or("tcp", |p| p.0.as_str());
            t.set("protocol", Val::Str(proto.into()));
            t.set("address", Val::Str(ip.to_string()));
            t.set("port", Val::Int(u64::from(port)));
            ip.is_ipv6()
        }
        Key::Mark(m) => {
            t.set("fwmark", Val::Int(u64::from(m)));
            let family = s.family.clone().unwrap_or_else(|| {
                if servers.first().is_some_and(|x| x.address.is_ipv6()) {
                    "inet6".into()
                } else {
                    "inet".into()
                }
            });
            if let Some((p, at)) = &s.protocol {
                t.comment(format!(
                    "protocol {p} ({at}): a firewall-mark service has none in IPVS"
                ));
            }
            let v6 = family == "inet6";
            t.set("family", Val::Str(family));
            v6
        }
    };
    t.fields.extend(s.table.fields.iter().cloned());
    if let Some((timeout, _)) = &s.persistence {
        let mut p = vec![("timeout", Val::Int(*timeout))];
        if let Some((g, gat)) = &s.granularity {
            match (v6, g.parse::<std::net::Ipv4Addr>(), g.parse::<u8>()) {
                (false, Ok(_), _) => p.push(("netmask", Val::Str(g.clone()))),
                (false, _, Ok(n @ 1..=32)) => {
                    let mask = std::net::Ipv4Addr::from(u32::MAX << (32 - u32::from(n)));
                    p.push(("netmask", Val::Str(mask.to_string())));
                }
                (true, _, Ok(n @ 1..=128)) => p.push(("prefix", Val::Int(u64::from(n)))),
                _ => report.error(
                    gat,
                    format!(
                        "`persistence_granularity {g}`: not a netmask of this service's family"
                    ),
                ),
            }
        }
        if let Some(e) = &s.engine {
            p.push(("engine", Val::Str(e.clone())));
        }
        t.set("persistence", Val::Inline(p));
    }
    if let Some((ip, port, at)) = &s.sorry {
        let mut d = Table::default();
        d.set("address", Val::Str(ip.to_string()));
        if let Some(p) = port {
            d.set("port", Val::Int(*p));
        }
        forward::write(s.sorry_method.as_ref().unwrap_or(&s.method), &mut d);
        let fields = d.fields.into_iter().map(|(k, v, _)| (k, v)).collect();
        t.set_noted("sorry_server", Val::Inline(fields), format!("{at}"));
    }
    if let Some((q, _)) = &s.quorum {
        t.set_noted(
            "quorum",
            Val::Inline(vec![("min_weight", Val::Int(*q))]),
            "the sum of the healthy servers' weights, as keepalived counts it",
        );
    }
    if servers.iter().all(|x| x.inhibit) {
        t.set_noted(
            "remove_after_drain",
            Val::Bool(false),
            "inhibit_on_failure: a failed server stays at weight 0",
        );
    } else {
        t.set_noted(
            "remove_after_drain",
            Val::Bool(true),
            "keepalived removes a failed server (no inhibit_on_failure)",
        );
        if servers.iter().any(|x| x.inhibit) {
            t.comment("changed meaning: only some servers have inhibit_on_failure; the agent's setting is the service's");
        }
    }
    OutService {
        at: member.unwrap_or(node.at()).clone(),
        table: t,
        servers: servers.iter().map(|x| x.out.clone()).collect(),
    }
}

/// What the agent would refuse, said at keepalived's lines: a server
/// twice, the sorry server among the servers, a quorum the weights can
/// never meet (keepalived then always uses the sorry server).
fn check_servers(
    s: &Settings,
    keys: &[(Key, Option<Place>)],
    servers: &[Server],
    report: &mut Report,
) {
    let vs_port = keys.first().and_then(|(k, _)| match k {
        Key::Addr(_, p) => Some(u64::from(*p)),
        Key::Mark(_) => None,
    });
    let port = |p: Option<u64>| p.or(vs_port).unwrap_or(0);
    for (i, a) in servers.iter().enumerate() {
        if let Some(b) = servers[..i]
            .iter()
            .find(|b| b.address == a.address && port(b.port) == port(a.port))
        {
            report.error(
                &a.at,
                format!(
                    "real server {} port {} is in this virtual server twice (first at {})",
                    a.address,
                    port(a.port),
                    b.at
                ),
            );
        }
    }
    if let Some((ip, p, at)) = &s.sorry {
        if let Some(b) = servers
            .iter()
            .find(|b| b.address == *ip && port(b.port) == port(*p))
        {
            report.error(
                at,
                format!(
                    "the sorry server is also a real server ({}): the agent keeps them apart",
                    b.at
                ),
            );
        }
    }
    if let Some((q, at)) = &s.quorum {
        let total: u64 = servers.iter().map(|x| x.weight).sum();
        if *q > total && !servers.is_empty() {
            report.error(
                at,
                format!("`quorum {q}` can never be met: the real servers' weights sum to {total}; the agent refuses such a quorum"),
            );
        }
    }
}
