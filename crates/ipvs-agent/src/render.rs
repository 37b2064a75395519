//! What a configuration would put in the kernel, as `check` prints it:
//! each service and server as the ipvsadm rule it becomes (`ipvsadm -S`
//! form, the library's renderer), with its check and policies in comments.

use std::fmt::Write as _;
use std::time::Duration;

use ipvsnl::rules::{destination_rule, service_rule, Numeric};

use crate::config::{Below, CheckKind, Config, HealthCheck, StartState};

/// The configuration as rules and comments, one line each.
///
/// ```
/// let config = ipvs_agent::config::parse_str("a.toml", r#"
/// [[service]]
/// protocol = "tcp"
/// address = "192.0.2.1"
/// port = 80
/// scheduler = "rr"
/// [[service.server]]
/// address = "10.0.0.2"
/// "#).unwrap();
/// let text = ipvs_agent::render::render(&config);
/// assert!(text.contains("-A -t 192.0.2.1:80 -s rr\n"));
/// assert!(text.contains("-a -t 192.0.2.1:80 -r 10.0.0.2:80 -m -w 1  # no check: always up\n"));
/// ```
pub fn render(config: &Config) -> String {
    let mut out = String::new();
    let a = &config.agent;
    let _ = writeln!(
        out,
        "# agent: resync every {}, removed servers drain at most {}, \
         at start a service waits at most {} for its servers' first checks",
        show(a.resync),
        show(a.drain_max),
        show(a.start_wait)
    );
    for vs in &config.services {
        let key = vs.service.key;
        let name = vs
            .name
            .as_deref()
            .map(|n| format!(" \"{n}\""))
            .unwrap_or_default();
        let below = match vs.quorum.below {
            Below::Withdraw => "withdraw",
            _ => "keep",
        };
        let mut policy = format!(
            "# service{name} {key}: quorum {} ({below} below it)",
            vs.quorum.min_weight
        );
        if vs.remove_after_drain {
            policy.push_str(", failing servers removed once drained");
        } else {
            policy.push_str(", failing servers at weight 0");
        }
        let _ = writeln!(out, "{policy}");
        let _ = writeln!(out, "{}", service_rule(&vs.service, &Numeric));
        for rs in &vs.servers {
            let check = rs
                .check
                .as_ref()
                .map_or_else(|| "no check: always up".to_string(), describe);
            let _ = writeln!(
                out,
                "{}  # {check}",
                destination_rule(&key, &rs.destination, &Numeric)
            );
        }
        if let Some(sorry) = &vs.sorry {
            let _ = writeln!(
                out,
                "# sorry server, added below the quorum: {}",
                destination_rule(&key, sorry, &Numeric)
            );
        }
    }
    out
}

/// A check in one line.
fn describe(c: &HealthCheck) -> String {
    let what = match &c.kind {
        CheckKind::Tcp { port } => format!("tcp connect{}", port_of(*port)),
        CheckKind::Http(h) => {
            let scheme = match h.tls {
                None => "http".to_string(),
                Some(t) if t.verify => "https".to_string(),
                Some(_) => "https (no verify)".to_string(),
            };
            let body = h
                .body_contains
                .as_ref()
                .map(|b| format!(" with \"{b}\""))
                .unwrap_or_default();
            format!(
                "{scheme} GET {}{} -> {}{body}",
                h.path,
                port_of(h.port),
                h.status
            )
        }
        CheckKind::Dns(q) => format!(
            "dns {} type {} rcode {}{}",
            q.name,
            q.qtype,
            q.rcode,
            port_of(q.port)
        ),
        CheckKind::Command { argv } => format!("command {}", argv.join(" ")),
    };
    let start = match c.start {
        StartState::Down => "down",
        _ => "up",
    };
    format!(
        "{what} every {} (timeout {}, jitter {}), rise {} fall {}, starts {start}",
        show(c.interval),
        show(c.timeout),
        show(c.jitter),
        c.rise,
        c.fall
    )
}

fn port_of(port: Option<u16>) -> String {
    port.map(|p| format!(" port {p}")).unwrap_or_default()
}

fn show(t: Duration) -> String {
    let ms = t.as_millis();
    if ms % 60_000 == 0 && ms > 0 {
        format!("{}m", ms / 60_000)
    } else if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}
