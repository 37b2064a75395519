//! A health check's table (`check = { kind = "tcp", ... }`), read and
//! checked: its kind's own keys only, times that fit together.

use std::time::Duration;

use crate::config::model::{CheckKind, DnsCheck, HealthCheck, HttpCheck, StartState, Tls};
use crate::config::read::{self, Fields, Value};
use crate::config::source::Diagnostics;

const COMMON: &[&str] = &[
    "kind", "interval", "timeout", "rise", "fall", "jitter", "start",
];
const ALL: &[&str] = &[
    "kind",
    "interval",
    "timeout",
    "rise",
    "fall",
    "jitter",
    "start",
    "port",
    "path",
    "host",
    "status",
    "body_contains",
    "tls_verify",
    "query",
    "type",
    "rcode",
    "command",
];
/// The most consecutive results `rise` or `fall` may ask for.
pub const RISE_FALL_MAX: u64 = 1000;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Tcp,
    Http,
    Https,
    Dns,
    Command,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Tcp => "tcp",
            Kind::Http => "http",
            Kind::Https => "https",
            Kind::Dns => "dns",
            Kind::Command => "command",
        }
    }

    /// The keys of this kind besides the common ones.
    fn own(self) -> &'static [&'static str] {
        match self {
            Kind::Tcp => &["port"],
            Kind::Http => &["port", "path", "host", "status", "body_contains"],
            Kind::Https => &[
                "port",
                "path",
                "host",
                "status",
                "body_contains",
                "tls_verify",
            ],
            Kind::Dns => &["port", "query", "type", "rcode"],
            Kind::Command => &["command"],
        }
    }
}

/// The DNS query types a check may ask, by name (the fleet encoder names
/// them back).
pub(crate) const QTYPES: &[(&str, u16)] = &[
    ("A", 1),
    ("NS", 2),
    ("CNAME", 5),
    ("SOA", 6),
    ("PTR", 12),
    ("MX", 15),
    ("TXT", 16),
    ("AAAA", 28),
    ("SRV", 33),
];
/// The DNS response codes a check may expect, by name.
pub(crate) const RCODES: &[(&str, u8)] = &[
    ("NOERROR", 0),
    ("FORMERR", 1),
    ("SERVFAIL", 2),
    ("NXDOMAIN", 3),
    ("NOTIMP", 4),
    ("REFUSED", 5),
];

/// Reads a check table; `None` (with its errors in `d`) when it is wrong.
pub(crate) fn health_check(d: &mut Diagnostics<'_>, v: &Value<'_>) -> Option<HealthCheck> {
    let f = Fields::open(d, v, "`check`", ALL)?;
    let before = d.count();
    let kind = match f.required(d, "kind", "`check`") {
        Some(k) => read::word(
            d,
            "kind",
            k,
            &[
                ("tcp", Kind::Tcp),
                ("http", Kind::Http),
                ("https", Kind::Https),
                ("dns", Kind::Dns),
                ("command", Kind::Command),
            ],
        ),
        None => None,
    };
    if let Some(k) = kind {
        for key in ALL {
            if COMMON.contains(key) || k.own().contains(key) {
                continue;
            }
            if let Some(v) = f.get(key) {
                d.error(
                    &v.span(),
                    format!("`{key}` is not a key of a `kind = \"{}\"` check", k.name()),
                );
            }
        }
    }
    let dur = |d: &mut Diagnostics<'_>, key: &str, default: Duration| match f.get(key) {
        Some(v) => read::duration(d, key, v),
        None => Some(default),
    };
    let interval = dur(d, "interval", Duration::from_secs(2));
    let timeout = dur(d, "timeout", Duration::from_secs(1));
    let jitter = dur(d, "jitter", Duration::ZERO);
    let count = |d: &mut Diagnostics<'_>, key: &str, default: u32| match f.get(key) {
        Some(v) => read::integer(d, key, v, 1, RISE_FALL_MAX).and_then(|n| u32::try_from(n).ok()),
        None => Some(default),
    };
    let rise = count(d, "rise", 2);
    let fall = count(d, "fall", 3);
    let start = match f.get("start") {
        Some(v) => read::word(
            d,
            "start",
            v,
            &[("up", StartState::Up), ("down", StartState::Down)],
        ),
        None => Some(StartState::Up),
    };
    if let (Some(i), Some(t)) = (interval, timeout) {
        if i.is_zero() {
            d.error(
                &f.get("interval").map_or(f.span(), |v| v.span()),
                "`interval` must be longer than 0",
            );
        }
        if t.is_zero() {
            d.error(
                &f.get("timeout").map_or(f.span(), |v| v.span()),
                "`timeout` must be longer than 0",
            );
        }
        if t > i {
            d.error(
                &f.get("timeout").map_or(f.span(), |v| v.span()),
                format!(
                    "`timeout` {} is longer than `interval` {}: a check would still run when the next is due",
                    show(t),
                    show(i)
                ),
            );
        }
        if let Some(j) = jitter {
            if j >= i && !i.is_zero() {
                d.error(
                    &f.get("jitter").map_or(f.span(), |v| v.span()),
                    format!(
                        "`jitter` {} must be shorter than `interval` {}",
                        show(j),
                        show(i)
                    ),
                );
            }
        }
    }
    let what = kind.map(|k| check_kind(d, &f, k));
    if d.count() != before {
        return None;
    }
    Some(HealthCheck {
        kind: what??,
        interval: interval?,
        timeout: timeout?,
        rise: rise?,
        fall: fall?,
        jitter: jitter?,
        start: start?,
    })
}

/// A duration as the file would write it.
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

fn check_kind(d: &mut Diagnostics<'_>, f: &Fields<'_, '_>, kind: Kind) -> Option<CheckKind> {
    let port = match f.get("port") {
        Some(v) if kind != Kind::Command => read::port(d, "port", v, false).map(Some),
        _ => Some(None),
    };
    match kind {
        Kind::Tcp => Some(CheckKind::Tcp { port: port? }),
        Kind::Http | Kind::Https => {
            let path = match f.get("path") {
                Some(v) => match read::string(d, "path", v) {
                    Some(p) if p.starts_with('/') && !has_space_or_control(p) => {
                        Some(p.to_string())
                    }
                    Some(p) => {
                        d.error(
                            &v.span(),
                            format!(
                                "`path`: {p:?} must start with / and have no spaces or control characters"
                            ),
                        );
                        None
                    }
                    None => None,
                },
                None => Some("/".to_string()),
            };
            let host = match f.get("host") {
                Some(v) => match read::string(d, "host", v) {
                    Some(h) if h.is_empty() || has_space_or_control(h) => {
                        d.error(
                            &v.span(),
                            format!("`host`: {h:?} must not be empty nor have spaces or control characters"),
                        );
                        None
                    }
                    Some(h) => Some(Some(h.to_string())),
                    None => None,
                },
                None => Some(None),
            };
            let status = match f.get("status") {
                Some(v) => {
                    read::integer(d, "status", v, 100, 599).and_then(|n| u16::try_from(n).ok())
                }
                None => Some(200),
            };
            let body = match f.get("body_contains") {
                Some(v) => {
                    match read::string(d, "body_contains", v) {
                        Some("") => {
                            d.error(&v.span(), "`body_contains` must not be empty (leave it out to accept any body)");
                            None
                        }
                        Some(s) => Some(Some(s.to_string())),
                        None => None,
                    }
                }
                None => Some(None),
            };
            let tls = match (kind, f.get("tls_verify")) {
                (Kind::Http, _) => Some(None),
                (_, Some(v)) => {
                    read::boolean(d, "tls_verify", v).map(|verify| Some(Tls { verify }))
                }
                (_, None) => Some(Some(Tls { verify: true })),
            };
            Some(CheckKind::Http(HttpCheck {
                tls: tls?,
                port: port?,
                path: path?,
                host: host?,
                status: status?,
                body_contains: body?,
            }))
        }
        Kind::Dns => {
            let name = match f.required(d, "query", "a dns check") {
                Some(v) => match read::string(d, "query", v) {
                    Some(n) if valid_dns_name(n) => Some(n.to_string()),
                    Some(n) => {
                        d.error(&v.span(), format!("`query`: \"{n}\" is not a domain name"));
                        None
                    }
                    None => None,
                },
                None => None,
            };
            let qtype = match f.get("type") {
                Some(v) => read::word(d, "type", v, QTYPES),
                None => Some(1),
            };
            let rcode = match f.get("rcode") {
                Some(v) => read::word(d, "rcode", v, RCODES),
                None => Some(0),
            };
            Some(CheckKind::Dns(DnsCheck {
                port: port?,
                name: name?,
                qtype: qtype?,
                rcode: rcode?,
            }))
        }
        Kind::Command => {
            let argv = match f.required(d, "command", "a command check") {
                Some(v) => match read::strings(d, "command", v) {
                    Some(a) if a.first().is_some_and(|p| !p.is_empty()) => Some(a),
                    Some(_) => {
                        d.error(
                            &v.span(),
                            "`command` needs a program: [\"/path/to/program\", \"arg\", ...]",
                        );
                        None
                    }
                    None => None,
                },
                None => None,
            };
            Some(CheckKind::Command { argv: argv? })
        }
    }
}

/// Labels of letters, digits and hyphens, at most 63 bytes each, 253 in
/// all; a final dot allowed.
fn valid_dns_name(n: &str) -> bool {
    let n = n.strip_suffix('.').unwrap_or(n);
    !n.is_empty()
        && n.len() <= 253
        && n.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

/// Whether `s` has a space or a control character: what an HTTP check's
/// `path` and `host` must not hold (each would break the request's lines).
pub(crate) fn has_space_or_control(s: &str) -> bool {
    s.chars().any(|c| c.is_whitespace() || c.is_control())
}
