//! A service, or the agent's settings, as the TOML text of a configuration
//! file: one canonical form (every value written, durations in
//! milliseconds), read back by [`crate::config::parse_str`] into an equal
//! value. The first line names the form's version.
//!
//! ```
//! let text = "[[service]]\nprotocol = \"tcp\"\naddress = \"192.0.2.1\"\nport = 80\n\
//!             [[service.server]]\naddress = \"10.0.0.2\"\n";
//! let config = ipvs_agent::config::parse_str("a.toml", text).unwrap();
//! let one = ipvs_agent::fleet::store::encode::service(&config.services[0]);
//! let back = ipvs_agent::config::parse_str("value", &one).unwrap();
//! assert_eq!(back.services, config.services);
//! ```

use std::fmt::Write as _;
use std::time::Duration;

use ipvsnl::{
    Destination, Forward, Netmask, Scheduler, ServiceFlags, ServiceKey, TunnelFlags, TunnelKind,
};

use crate::config::check_parse::{QTYPES, RCODES};
use crate::config::{
    AgentSettings, Below, CheckKind, HealthCheck, Quorum, StartState, VirtualService,
};

/// The first line of a service's text.
pub const SERVICE_HEADER: &str = "# ipvs-agent fleet service v1";
/// The first line of the agent settings' text.
pub const AGENT_HEADER: &str = "# ipvs-agent fleet agent v1";

/// The agent's settings as an `[agent]` table.
pub fn agent(a: &AgentSettings) -> String {
    format!(
        "{AGENT_HEADER}\n[agent]\nresync = {}\ndrain_max = {}\nstart_wait = {}\nreload_guard = {}\n",
        duration(a.resync),
        duration(a.drain_max),
        duration(a.start_wait),
        a.reload_guard
    )
}

/// One service, its servers and checks, as a `[[service]]` table.
pub fn service(vs: &VirtualService) -> String {
    let mut o = String::with_capacity(256 + 160 * vs.servers.len());
    o.push_str(SERVICE_HEADER);
    o.push_str("\n[[service]]\n");
    let s = &vs.service;
    if let Some(n) = &vs.name {
        let _ = writeln!(o, "name = {}", string(n));
    }
    match s.key {
        ServiceKey::Fwmark { mark, family } => {
            let f = if family == ipvsnl::AddressFamily::Inet6 {
                "inet6"
            } else {
                "inet"
            };
            let _ = writeln!(o, "fwmark = {mark}\nfamily = \"{f}\"");
        }
        ServiceKey::Inet {
            protocol,
            addr,
            port,
        } => {
            let p = protocol.to_string().to_ascii_lowercase();
            let _ = writeln!(o, "protocol = \"{p}\"\naddress = \"{addr}\"\nport = {port}");
        }
        _ => {}
    }
    let _ = writeln!(o, "scheduler = {}", string(s.scheduler.name()));
    let prefix = match s.scheduler {
        Scheduler::SourceHashing => Some("sh"),
        Scheduler::Maglev => Some("mh"),
        _ => None,
    };
    if let Some(p) = prefix {
        let mut flags = Vec::new();
        if s.flags.contains(ServiceFlags::SCHED1) {
            flags.push(format!("\"{p}-fallback\""));
        }
        if s.flags.contains(ServiceFlags::SCHED2) {
            flags.push(format!("\"{p}-port\""));
        }
        let _ = writeln!(o, "scheduler_flags = [{}]", flags.join(", "));
    }
    if s.flags.contains(ServiceFlags::PERSISTENT) {
        let mask = match s.netmask {
            Netmask::V4(m) => format!("netmask = \"{m}\""),
            Netmask::V6(p) => format!("prefix = {p}"),
            _ => String::new(),
        };
        let engine = s
            .persistence_engine
            .as_ref()
            .map(|e| format!(", engine = {}", string(e)))
            .unwrap_or_default();
        let _ = writeln!(
            o,
            "persistence = {{ timeout = {}, {mask}{engine} }}",
            s.timeout
        );
    }
    let _ = writeln!(
        o,
        "one_packet = {}",
        s.flags.contains(ServiceFlags::ONE_PACKET)
    );
    // The default quorum is left out: written, it would be checked against
    // the servers' weights, which an implicit one is not.
    if vs.quorum != Quorum::default() {
        let below = if vs.quorum.below == Below::Withdraw {
            "withdraw"
        } else {
            "keep"
        };
        let _ = writeln!(
            o,
            "quorum = {{ min_weight = {}, below = \"{below}\" }}",
            vs.quorum.min_weight
        );
    }
    let _ = writeln!(o, "remove_after_drain = {}", vs.remove_after_drain);
    if let Some(sorry) = &vs.sorry {
        o.push_str("sorry_server = { ");
        destination(&mut o, sorry, false, ", ");
        o.push_str(" }\n");
    }
    for rs in &vs.servers {
        o.push_str("[[service.server]]\n");
        destination(&mut o, &rs.destination, true, "\n");
        o.push('\n');
        if let Some(c) = &rs.check {
            let _ = writeln!(o, "check = {{ {} }}", check(c));
        }
    }
    o
}

/// A destination's keys, `key = value` each, `sep`-separated, appended
/// to `o` (written into one string: 10,000 services are encoded at each
/// publish).
fn destination(o: &mut String, d: &Destination, thresholds: bool, sep: &str) {
    let _ = write!(o, "address = \"{}\"{sep}weight = {}", d.addr, d.weight);
    // Port 0 is the default of a firewall-mark (or port-less) service's
    // server, and cannot be written.
    if d.port != 0 {
        let _ = write!(o, "{sep}port = {}", d.port);
    }
    let forward = match d.forward {
        Forward::Route => "route",
        Forward::Local => "local",
        Forward::Tunnel(_) => "tunnel",
        _ => "masquerade",
    };
    let _ = write!(o, "{sep}forward = \"{forward}\"");
    if let Forward::Tunnel(t) = d.forward {
        let kind = match t.kind {
            TunnelKind::Gue => "gue",
            TunnelKind::Gre => "gre",
            _ => "ipip",
        };
        let port = if t.kind == TunnelKind::Gue {
            format!(" port = {},", t.port)
        } else {
            String::new()
        };
        let sum = if t.flags.contains(TunnelFlags::REMCSUM) {
            "remcsum"
        } else if t.flags.contains(TunnelFlags::CSUM) {
            "csum"
        } else {
            "none"
        };
        let _ = write!(
            o,
            "{sep}tunnel = {{ kind = \"{kind}\",{port} checksum = \"{sum}\" }}"
        );
    }
    if thresholds {
        let _ = write!(
            o,
            "{sep}upper_threshold = {}{sep}lower_threshold = {}",
            d.upper_threshold, d.lower_threshold
        );
    }
}

/// A check's keys, `, `-separated, for an inline table.
fn check(c: &HealthCheck) -> String {
    let mut p = Vec::new();
    let port = |p: &mut Vec<String>, port: Option<u16>| {
        if let Some(n) = port {
            p.push(format!("port = {n}"));
        }
    };
    match &c.kind {
        CheckKind::Tcp { port: n } => {
            p.push("kind = \"tcp\"".to_string());
            port(&mut p, *n);
        }
        CheckKind::Http(h) => {
            p.push(format!(
                "kind = \"{}\"",
                if h.tls.is_some() { "https" } else { "http" }
            ));
            port(&mut p, h.port);
            p.push(format!("path = {}", string(&h.path)));
            if let Some(host) = &h.host {
                p.push(format!("host = {}", string(host)));
            }
            p.push(format!("status = {}", h.status));
            if let Some(b) = &h.body_contains {
                p.push(format!("body_contains = {}", string(b)));
            }
            if let Some(t) = h.tls {
                p.push(format!("tls_verify = {}", t.verify));
            }
        }
        CheckKind::Dns(q) => {
            p.push("kind = \"dns\"".to_string());
            port(&mut p, q.port);
            p.push(format!("query = {}", string(&q.name)));
            p.push(format!("type = {}", word(QTYPES, q.qtype)));
            p.push(format!("rcode = {}", word(RCODES, q.rcode)));
        }
        CheckKind::Command { argv } => {
            p.push("kind = \"command\"".to_string());
            let args: Vec<String> = argv.iter().map(|a| string(a)).collect();
            p.push(format!("command = [{}]", args.join(", ")));
        }
    }
    let start = if c.start == StartState::Down {
        "down"
    } else {
        "up"
    };
    p.push(format!("interval = {}", duration(c.interval)));
    p.push(format!("timeout = {}", duration(c.timeout)));
    p.push(format!("jitter = {}", duration(c.jitter)));
    p.push(format!("rise = {}", c.rise));
    p.push(format!("fall = {}", c.fall));
    p.push(format!("start = \"{start}\""));
    p.join(", ")
}

/// The name of a number the parser reads from a word (the first word if
/// the number has none: not reached for a parsed configuration).
fn word<T: PartialEq + Copy>(words: &[(&str, T)], n: T) -> String {
    let w = words
        .iter()
        .find(|(_, v)| *v == n)
        .map_or(words[0].0, |(w, _)| *w);
    format!("\"{w}\"")
}

/// A duration in whole milliseconds, as the parser reads it.
fn duration(t: Duration) -> String {
    format!("\"{}ms\"", t.as_millis())
}

/// A TOML basic string: quotes, backslashes and control characters escaped.
fn string(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(o, "\\u{:04X}", u32::from(c));
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}
