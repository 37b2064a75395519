//! A `real_server IP [PORT] { ... }` converted into a `[[service.server]]`:
//! address, port, weight, forwarding method (the service's `lb_kind`
//! unless its own `lvs_method`), thresholds, and its first checker the
//! agent has as its check.

use std::net::IpAddr;

use crate::import::checker::checker;
use crate::import::forward::{self, method, Method};
use crate::import::keywords::{CHECKERS, REAL_SERVER};
use crate::import::numbers::uint;
use crate::import::output::{OutServer, Val};
use crate::import::report::{NoteKind, Place, Report};
use crate::import::timing::Timing;
use crate::import::tree::Node;

/// A converted real server, and whether keepalived would keep it at
/// weight 0 when it fails (`inhibit_on_failure`, its own or the service's).
pub(crate) struct Server {
    pub(crate) out: OutServer,
    pub(crate) inhibit: bool,
    pub(crate) address: IpAddr,
    /// Its port, if the line gives one.
    pub(crate) port: Option<u64>,
    /// Its weight.
    pub(crate) weight: u64,
    /// Its `real_server` line.
    pub(crate) at: Place,
}

/// The real server of `node`, its method and checks defaulting to the
/// service's (`forward`, `timing`, `inhibit`); `fwmark`: of a firewall-mark
/// service (a server without a port has port 0).
pub(crate) fn real_server(
    node: &Node,
    forward: &Method,
    timing: &Timing,
    inhibit: bool,
    fwmark: bool,
    report: &mut Report,
) -> Option<Server> {
    let at = node.at();
    let address = match node.arg(0).map(str::parse::<IpAddr>) {
        Some(Ok(a)) => a,
        _ => {
            report.error(
                at,
                format!(
                    "`real_server` needs an IP address, found {:?}",
                    node.arg(0).unwrap_or("")
                ),
            );
            return None;
        }
    };
    let port = match node.arg(1) {
        Some(_) => Some(uint(node, 1, 0, 65535, report)?),
        None => None,
    };
    if node.args.len() > 2 {
        report.error(at, "`real_server` takes an address and a port");
    }
    if !fwmark && port.unwrap_or(0) == 0 {
        report.note(
            at,
            NoteKind::Changed,
            "a real server without a port: keepalived gives the kernel port 0, the agent the \
             service's port",
        );
    }
    // keepalived reads port 0 as no port.
    let port = port.filter(|p| *p != 0);
    report.mapped(at);
    let mut out = OutServer::default();
    out.table.origin = Some(at.clone());
    out.table.comment(format!("real_server, {at}"));
    out.table.set("address", Val::Str(address.to_string()));
    if let Some(p) = port {
        out.table.set("port", Val::Int(p));
    }
    let mut timing = timing.clone();
    let mut method_here = forward.clone();
    let mut inhibit = inhibit;
    let mut weight = 1;
    let mut thresholds = (None, None);
    let mut checkers: Vec<&Node> = Vec::new();
    for c in node.children() {
        let name = c.name();
        if CHECKERS.contains(&name) {
            checkers.push(c);
            continue;
        }
        if !REAL_SERVER.contains(&name) {
            report.error(
                c.at(),
                format!("`{name}` is not a keyword of a `real_server` (keepalived 2.2.7)"),
            );
            continue;
        }
        if timing.take(c, report) {
            continue;
        }
        if matches!(
            name,
            "weight" | "lvs_method" | "uthreshold" | "lthreshold" | "inhibit_on_failure"
        ) {
            report.mapped(c.at());
        }
        match name {
            "weight" => weight = uint(c, 0, 0, 2_147_483_647, report).unwrap_or(1),
            "lvs_method" => {
                if let Some(m) = method(c, report) {
                    method_here = m;
                }
            }
            "uthreshold" => thresholds.0 = uint(c, 0, 0, 2_147_483_647, report),
            "lthreshold" => thresholds.1 = uint(c, 0, 0, 2_147_483_647, report),
            "inhibit_on_failure" => inhibit = true,
            "notify_up" | "notify_down" | "smtp_alert" => report.note(
                c.at(),
                NoteKind::NotSupported,
                format!("`{name}`: the agent runs no script and sends no mail; each change is a log line and a metric (`ipvs_agent_transitions_total`)"),
            ),
            _ => report.note(c.at(), NoteKind::NotSupported, format!("`{name}`: the agent has no such setting; left out")),
        }
    }
    out.table.set("weight", Val::Int(weight));
    forward::write(&method_here, &mut out.table);
    if let Some(u) = thresholds.0 {
        out.table.set("upper_threshold", Val::Int(u));
    }
    if let Some(l) = thresholds.1 {
        out.table.set("lower_threshold", Val::Int(l));
    }
    let mut chosen = None;
    for c in checkers {
        let check = checker(c, &timing, report);
        match (&chosen, check) {
            (None, Some(t)) => chosen = Some((t, c.at().clone())),
            (Some((_, first)), Some(_)) => report.note(
                c.at(),
                NoteKind::NotSupported,
                format!("a second checker: the agent runs one check a server, the first ({first})"),
            ),
            (_, None) => {}
        }
    }
    match chosen {
        Some((mut t, _)) => {
            // A server of port 0 (a fwmark service's) needs the check's port.
            if fwmark && port.is_none() && t.get("port").is_none() && t.get("command").is_none() {
                report.error(
                    at,
                    "the check of a real server without a port needs `connect_port`",
                );
            }
            t.comments.retain(|c| !c.is_empty());
            out.check = Some(t);
        }
        None => out
            .table
            .comment("no check: the agent takes this server as always healthy"),
    }
    Some(Server {
        out,
        inhibit,
        address,
        port,
        weight,
        at: at.clone(),
    })
}
