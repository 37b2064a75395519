//! `lb_kind` / `lvs_method` (and `sorry_server_lvs_method`): `NAT`, `DR`,
//! or `TUN` with `type ipip|gue|gre`, `port N` (GUE) and
//! `nocsum|csum|remcsum`, as the agent's `forward` and `tunnel`.

use crate::import::numbers::uint;
use crate::import::output::{Table, Val};
use crate::import::report::Report;
use crate::import::tree::Node;

/// A forwarding method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Method {
    /// `NAT`: masquerade.
    Nat,
    /// `DR`: direct routing.
    Dr,
    /// `TUN`: a tunnel of a kind, a GUE port, a checksum mode.
    Tun {
        kind: &'static str,
        port: Option<u64>,
        checksum: &'static str,
    },
}

impl Default for Method {
    /// keepalived's default: NAT.
    fn default() -> Self {
        Method::Nat
    }
}

/// The method of a `lb_kind`-like line; an error at its line when keepalived
/// would refuse it.
pub(crate) fn method(node: &Node, report: &mut Report) -> Option<Method> {
    let m = match node.arg(0) {
        Some("NAT") => Method::Nat,
        Some("DR") => Method::Dr,
        Some("TUN") => {
            let mut kind = "ipip";
            let mut port = None;
            let mut checksum = "none";
            let mut i = 1;
            while let Some(a) = node.arg(i) {
                match a {
                    "type" => {
                        kind = match node.arg(i + 1) {
                            Some("ipip") => "ipip",
                            Some("gue") => "gue",
                            Some("gre") => "gre",
                            other => {
                                report.error(
                                    node.at(),
                                    format!(
                                        "`{}`: unknown tunnel type {}",
                                        node.name(),
                                        other.unwrap_or("(none)")
                                    ),
                                );
                                return None;
                            }
                        };
                        i += 1;
                    }
                    "port" => {
                        port = Some(uint(node, i + 1, 1, 65535, report)?);
                        i += 1;
                    }
                    "nocsum" => checksum = "none",
                    "csum" => checksum = "csum",
                    "remcsum" => checksum = "remcsum",
                    other => {
                        report.error(
                            node.at(),
                            format!("`{}`: unknown tunnel option {other}", node.name()),
                        );
                        return None;
                    }
                }
                i += 1;
            }
            if (kind == "gue") != port.is_some() {
                report.error(
                    node.at(),
                    format!(
                        "`{}`: a gue tunnel needs `port`, another cannot have one",
                        node.name()
                    ),
                );
                return None;
            }
            Method::Tun {
                kind,
                port,
                checksum,
            }
        }
        other => {
            report.error(
                node.at(),
                format!(
                    "`{}`: unknown method {} (NAT, DR or TUN)",
                    node.name(),
                    other.unwrap_or("(none)")
                ),
            );
            return None;
        }
    };
    if !matches!(m, Method::Tun { .. }) && node.args.len() > 1 {
        report.error(
            node.at(),
            format!("`{}`: only TUN takes options", node.name()),
        );
        return None;
    }
    Some(m)
}

/// Writes `forward` (and `tunnel`) into `t`.
pub(crate) fn write(m: &Method, t: &mut Table) {
    match m {
        Method::Nat => t.set("forward", Val::Str("masquerade".into())),
        Method::Dr => t.set("forward", Val::Str("route".into())),
        Method::Tun {
            kind,
            port,
            checksum,
        } => {
            t.set("forward", Val::Str("tunnel".into()));
            let mut tun = vec![("kind", Val::Str((*kind).into()))];
            if let Some(p) = port {
                tun.push(("port", Val::Int(*p)));
            }
            tun.push(("checksum", Val::Str((*checksum).into())));
            t.set("tunnel", Val::Inline(tun));
        }
    }
}
