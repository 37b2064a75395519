//! A real server's table (`[[service.server]]`) and the sorry server's,
//! read into the library's [`Destination`].

use std::ops::Range;

use ipvsnl::{Destination, Forward, ServiceKey, Tunnel, TunnelFlags, THRESHOLD_MAX, WEIGHT_MAX};

use crate::config::check_parse::health_check;
use crate::config::model::{CheckKind, HealthCheck, RealServer};
use crate::config::read::{self, Fields, Value};
use crate::config::source::Diagnostics;

const SERVER: &[&str] = &[
    "address",
    "port",
    "weight",
    "forward",
    "tunnel",
    "upper_threshold",
    "lower_threshold",
    "check",
];
const SORRY: &[&str] = &["address", "port", "weight", "forward", "tunnel"];
const TUNNEL: &[&str] = &["kind", "port", "checksum"];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Method {
    Masquerade,
    Route,
    Tunnel,
    Local,
}

/// A real server of the service `key` (`None`: the service's key is
/// wrong, so only what does not depend on it is checked); its check is its own, else
/// `inherited` (the service's). Gives the destination and the span of its
/// address.
pub(crate) fn real_server(
    d: &mut Diagnostics<'_>,
    v: &Value<'_>,
    key: Option<&ServiceKey>,
    inherited: Option<&HealthCheck>,
) -> Option<(RealServer, Range<usize>)> {
    let f = Fields::open(d, v, "a `[[service.server]]`", SERVER)?;
    let before = d.count();
    let dest = destination(d, &f, key, "a server");
    let check = match f.get("check") {
        Some(c) => health_check(d, c),
        None => inherited.cloned(),
    };
    let (dest, span) = dest?;
    // A server of port 0 (a firewall-mark service's default) has no port
    // for a network check to probe: the check must name one.
    if let Some(c) = &check {
        let probed = match &c.kind {
            CheckKind::Tcp { port } => Some(*port),
            CheckKind::Http(h) => Some(h.port),
            CheckKind::Dns(q) => Some(q.port),
            _ => None,
        };
        if dest.port == 0 && probed == Some(None) {
            let at = f.get("check").map_or(span.clone(), |v| v.span());
            d.error(
                &at,
                format!(
                    "the check of server {} needs `port`: the server has none (port 0)",
                    dest.addr
                ),
            );
        }
    }
    if d.count() != before {
        return None;
    }
    Some((
        RealServer {
            destination: dest,
            check,
        },
        span,
    ))
}

/// The sorry server of the service `key` (no check, no thresholds).
pub(crate) fn sorry_server(
    d: &mut Diagnostics<'_>,
    v: &Value<'_>,
    key: Option<&ServiceKey>,
) -> Option<(Destination, Range<usize>)> {
    let f = Fields::open(d, v, "`sorry_server`", SORRY)?;
    destination(d, &f, key, "`sorry_server`")
}

fn destination(
    d: &mut Diagnostics<'_>,
    f: &Fields<'_, '_>,
    key: Option<&ServiceKey>,
    what: &str,
) -> Option<(Destination, Range<usize>)> {
    let addr_v = f.required(d, "address", what);
    let addr = addr_v.and_then(|v| read::address(d, "address", v));
    // Default port: the service's (0 for a firewall-mark service: the
    // kernel keeps the client's destination port).
    let port = match f.get("port") {
        Some(v) => read::port(d, "port", v, false),
        None => Some(
            key.and_then(ServiceKey::socket_addr)
                .map_or(0, |a| a.port()),
        ),
    };
    let weight = match f.get("weight") {
        Some(v) => read::integer(d, "weight", v, 0, u64::from(WEIGHT_MAX)),
        None => Some(1),
    };
    let method = match f.get("forward") {
        Some(v) => read::word(
            d,
            "forward",
            v,
            &[
                ("masquerade", Method::Masquerade),
                ("route", Method::Route),
                ("tunnel", Method::Tunnel),
                ("local", Method::Local),
            ],
        ),
        None => Some(Method::Masquerade),
    };
    let tunnel = match f.get("tunnel") {
        Some(t) => {
            if method.is_some() && method != Some(Method::Tunnel) {
                d.error(&t.span(), "`tunnel` parameters need `forward = \"tunnel\"`");
                None
            } else {
                tunnel(d, t)
            }
        }
        None => Some(Tunnel::ipip()),
    };
    let thresholds =
        [("upper_threshold", 0usize), ("lower_threshold", 1)].map(|(k, _)| match f.get(k) {
            Some(v) => read::integer(d, k, v, 0, u64::from(THRESHOLD_MAX)),
            None => Some(0),
        });
    let addr = addr?;
    let addr_span = addr_v?.span();
    let forward = match method? {
        Method::Masquerade => Forward::Masquerade,
        Method::Route => Forward::Route,
        Method::Local => Forward::Local,
        Method::Tunnel => Forward::Tunnel(tunnel?),
    };
    let [upper, lower] = thresholds;
    let dest = Destination::new(addr, port?)
        .with_forward(forward)
        .with_weight(u32::try_from(weight?).ok()?)
        .with_thresholds(u32::try_from(upper?).ok()?, u32::try_from(lower?).ok()?);
    // What the kernel would refuse, in the library's words: a family that
    // differs from the service's without a tunnel, a multicast address,
    // thresholds out of order.
    let checked = match key {
        Some(k) => dest.validate_for(k),
        None => Ok(()),
    };
    if let Err(e) = checked {
        let at = match e.field() {
            "thresholds" => f
                .get("lower_threshold")
                .map_or(addr_span.clone(), |v| v.span()),
            "tunnel" => f.get("tunnel").map_or(addr_span.clone(), |v| v.span()),
            _ => addr_span.clone(),
        };
        d.error(&at, format!("{what}: {e}"));
        return None;
    }
    Some((dest, addr_span))
}

fn tunnel(d: &mut Diagnostics<'_>, v: &Value<'_>) -> Option<Tunnel> {
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Kind {
        Ipip,
        Gue,
        Gre,
    }
    let f = Fields::open(d, v, "`tunnel`", TUNNEL)?;
    let kind = match f.get("kind") {
        Some(k) => read::word(
            d,
            "kind",
            k,
            &[("ipip", Kind::Ipip), ("gue", Kind::Gue), ("gre", Kind::Gre)],
        ),
        None => Some(Kind::Ipip),
    };
    let port = match f.get("port") {
        Some(p) if kind.is_some() && kind != Some(Kind::Gue) => {
            d.error(&p.span(), "a tunnel `port` is only for `kind = \"gue\"`");
            None
        }
        Some(p) => read::port(d, "port", p, false).map(Some),
        None if kind == Some(Kind::Gue) => {
            d.error(&f.span(), "a GUE tunnel needs `port`");
            None
        }
        None => Some(None),
    };
    let flags = match f.get("checksum") {
        Some(c) => read::word(
            d,
            "checksum",
            c,
            &[
                ("none", TunnelFlags::empty()),
                ("csum", TunnelFlags::CSUM),
                ("remcsum", TunnelFlags::REMCSUM),
            ],
        ),
        None => Some(TunnelFlags::empty()),
    };
    let t = match kind? {
        Kind::Ipip => Tunnel::ipip(),
        Kind::Gre => Tunnel::gre(),
        Kind::Gue => Tunnel::gue(port??),
    };
    let _ = port?;
    Some(t.with_flags(flags?))
}
