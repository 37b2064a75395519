//! The file's tables read into the model: the top level, `[agent]` and
//! each `[[service]]` with its servers. Every error is recorded and
//! reading goes on, so one pass reports them all.

use std::ops::Range;

use ipvsnl::{AddressFamily, Netmask, Protocol, Scheduler, Service, ServiceFlags, ServiceKey};

use crate::config::check_parse::health_check;
use crate::config::model::{AgentSettings, Below, Config, HealthCheck, Quorum, VirtualService};
use crate::config::read::{self, Fields, Value};
use crate::config::server_parse::{real_server, sorry_server};
use crate::config::source::Diagnostics;

/// Where the parts of a service are in the file, for the checks that
/// compare services and servers (`validate`).
pub(crate) struct ServiceSpans {
    /// The service's key (its address, or its mark).
    pub(crate) key: Range<usize>,
    /// Its `name`, if it has one.
    pub(crate) name: Option<Range<usize>>,
    /// Each server's address, in the order of `servers`.
    pub(crate) servers: Vec<Range<usize>>,
    /// The sorry server's address.
    pub(crate) sorry: Option<Range<usize>>,
    /// The quorum's `min_weight`.
    pub(crate) quorum: Option<Range<usize>>,
    /// Whether every part of the service read well (the checks of totals,
    /// such as the quorum's, are made only then).
    pub(crate) clean: bool,
}

/// The keys of the file's top level.
pub(crate) const TOP: &[&str] = &["agent", "service"];
const AGENT: &[&str] = &["resync", "drain_max", "start_wait", "reload_guard"];
const SERVICE: &[&str] = &[
    "name",
    "protocol",
    "address",
    "port",
    "fwmark",
    "family",
    "scheduler",
    "scheduler_flags",
    "persistence",
    "one_packet",
    "check",
    "server",
    "sorry_server",
    "quorum",
    "remove_after_drain",
];
const PERSISTENCE: &[&str] = &["timeout", "netmask", "prefix", "engine"];
const QUORUM: &[&str] = &["min_weight", "below"];

/// Reads the whole document; `None` where a part could not be read (its
/// errors are in `d`).
pub(crate) fn document(
    d: &mut Diagnostics<'_>,
    root: &Value<'_>,
) -> Option<(Config, Vec<ServiceSpans>)> {
    let top = Fields::open(d, root, "the file", TOP)?;
    let agent = match top.get("agent") {
        Some(v) => agent_settings(d, v),
        None => Some(AgentSettings::default()),
    };
    let mut services = Vec::new();
    let mut spans = Vec::new();
    match top.get("service") {
        Some(v) => {
            for s in read::tables(d, "service", "service", v) {
                if let Some((svc, sp)) = service(d, s) {
                    services.push(svc);
                    spans.push(sp);
                }
            }
        }
        None => d.error(
            &top.span(),
            "the file has no `[[service]]`: nothing to configure",
        ),
    }
    // Settings that could not be read have their errors recorded: the
    // defaults stand in, so the services are still checked.
    Some((
        Config {
            agent: agent.unwrap_or_default(),
            services,
        },
        spans,
    ))
}

/// The `[agent]` table; `None` (its errors in `d`) when it is wrong.
pub(crate) fn agent_settings(d: &mut Diagnostics<'_>, v: &Value<'_>) -> Option<AgentSettings> {
    let f = Fields::open(d, v, "[agent]", AGENT)?;
    let mut a = AgentSettings::default();
    let mut ok = true;
    if let Some(v) = f.get("resync") {
        match read::duration(d, "resync", v) {
            Some(t) if t.is_zero() => {
                d.error(&v.span(), "`resync` must be longer than 0");
                ok = false;
            }
            Some(t) => a.resync = t,
            None => ok = false,
        }
    }
    if let Some(v) = f.get("drain_max") {
        match read::duration(d, "drain_max", v) {
            Some(t) => a.drain_max = t,
            None => ok = false,
        }
    }
    if let Some(v) = f.get("start_wait") {
        match read::duration(d, "start_wait", v) {
            Some(t) => a.start_wait = t,
            None => ok = false,
        }
    }
    if let Some(v) = f.get("reload_guard") {
        match read::boolean(d, "reload_guard", v) {
            Some(b) => a.reload_guard = b,
            None => ok = false,
        }
    }
    ok.then_some(a)
}

/// The service's key: `protocol` + `address` + `port`, or `fwmark` (+ `family`).
fn service_key(
    d: &mut Diagnostics<'_>,
    f: &Fields<'_, '_>,
    persistent: bool,
) -> Option<(ServiceKey, Range<usize>)> {
    match (f.get("fwmark"), f.get("address")) {
        (Some(m), Some(a)) => {
            d.error(&a.span(), "a service has `address` or `fwmark`, not both");
            let _ = m;
            None
        }
        (None, None) => {
            d.error(
                &f.span(),
                "a service needs `address` (with `protocol` and `port`) or `fwmark`",
            );
            None
        }
        (Some(m), None) => {
            for k in ["protocol", "port"] {
                if let Some(v) = f.get(k) {
                    d.error(
                        &v.span(),
                        format!("`{k}` is for an address service, not a `fwmark` one"),
                    );
                }
            }
            let mark = read::integer(d, "fwmark", m, 1, u64::from(u32::MAX))?;
            let family = match f.get("family") {
                Some(v) => read::word(
                    d,
                    "family",
                    v,
                    &[
                        ("inet", AddressFamily::Inet),
                        ("inet6", AddressFamily::Inet6),
                    ],
                )?,
                None => AddressFamily::Inet,
            };
            Some((
                ServiceKey::fwmark(u32::try_from(mark).ok()?, family),
                m.span(),
            ))
        }
        (None, Some(a)) => {
            if let Some(v) = f.get("family") {
                d.error(
                    &v.span(),
                    "`family` is for a `fwmark` service; an address service has its address's",
                );
            }
            let addr = read::address(d, "address", a);
            let protocol = match f.required(d, "protocol", "an address service") {
                Some(v) => read::word(
                    d,
                    "protocol",
                    v,
                    &[
                        ("tcp", Protocol::Tcp),
                        ("udp", Protocol::Udp),
                        ("sctp", Protocol::Sctp),
                    ],
                ),
                None => None,
            };
            let port = match f.required(d, "port", "an address service") {
                Some(v) => {
                    let p = read::port(d, "port", v, true);
                    if p == Some(0) && !persistent {
                        d.error(
                            &v.span(),
                            "`port` 0 (every port) is only for a persistent service: add `persistence`",
                        );
                        return None;
                    }
                    p
                }
                None => None,
            };
            let addr = addr?;
            let service_ok = match addr {
                std::net::IpAddr::V4(x) => {
                    !(x.is_unspecified() || x.is_broadcast() || x.is_multicast())
                }
                std::net::IpAddr::V6(x) => !(x.is_unspecified() || x.is_multicast()),
            };
            if !service_ok {
                d.error(
                    &a.span(),
                    format!("`address`: {addr} is not a unicast address"),
                );
                return None;
            }
            Some((ServiceKey::inet(protocol?, (addr, port?).into()), a.span()))
        }
    }
}

fn scheduler(d: &mut Diagnostics<'_>, v: &Value<'_>) -> Option<Scheduler> {
    let name = read::string(d, "scheduler", v)?;
    match Scheduler::new(name) {
        Ok(Scheduler::Other(_)) | Err(_) => {
            let known: Vec<String> = Scheduler::named().map(|s| s.name().to_string()).collect();
            d.error(
                &v.span(),
                format!(
                    "`scheduler`: unknown scheduler \"{name}\" (known: {})",
                    known.join(", ")
                ),
            );
            None
        }
        Ok(s) => Some(s),
    }
}

fn scheduler_flags(
    d: &mut Diagnostics<'_>,
    v: &Value<'_>,
    sched: Option<&Scheduler>,
) -> Option<ServiceFlags> {
    let toml::de::DeValue::Array(items) = v.get_ref() else {
        d.error(
            &v.span(),
            format!(
                "`scheduler_flags` must be an array of strings, found {}",
                read::kind(v)
            ),
        );
        return None;
    };
    let mut flags = ServiceFlags::empty();
    let mut ok = true;
    for item in items.iter() {
        let Some(n) = read::string(d, "scheduler_flags", item) else {
            ok = false;
            continue;
        };
        let (flag, owner) = match n {
            "sh-fallback" => (ServiceFlags::SH_FALLBACK, Scheduler::SourceHashing),
            "sh-port" => (ServiceFlags::SH_PORT, Scheduler::SourceHashing),
            "mh-fallback" => (ServiceFlags::MH_FALLBACK, Scheduler::Maglev),
            "mh-port" => (ServiceFlags::MH_PORT, Scheduler::Maglev),
            _ => {
                d.error(
                    &item.span(),
                    format!("`scheduler_flags`: unknown flag \"{n}\" (known: sh-fallback, sh-port, mh-fallback, mh-port)"),
                );
                ok = false;
                continue;
            }
        };
        // Without `scheduler` the service gets the library's default (wlc).
        let sched = sched.cloned().unwrap_or_default();
        if sched != owner {
            d.error(
                &item.span(),
                format!(
                    "`scheduler_flags`: \"{n}\" is a flag of the {} scheduler, not of {sched}",
                    owner.name()
                ),
            );
            ok = false;
        }
        flags |= flag;
    }
    ok.then_some(flags)
}

/// `persistence = { timeout = 300, netmask = "255.255.255.0" }`: the
/// service with persistence set, or `None` on an error.
fn persistence(d: &mut Diagnostics<'_>, v: &Value<'_>, mut svc: Service) -> Option<Service> {
    let f = Fields::open(d, v, "`persistence`", PERSISTENCE)?;
    let timeout = match f.required(d, "timeout", "`persistence`") {
        Some(t) => read::integer(d, "timeout", t, 1, u64::from(u32::MAX)),
        None => None,
    };
    let family = svc.key.family();
    let mut ok = true;
    if let Some(m) = f.get("netmask") {
        if family != AddressFamily::Inet {
            d.error(
                &m.span(),
                "`netmask` is for an IPv4 service; an IPv6 one takes `prefix`",
            );
            ok = false;
        } else if let Some(s) = read::string(d, "netmask", m) {
            match s.parse::<std::net::Ipv4Addr>() {
                Ok(mask)
                    if u32::from(mask).leading_ones() + u32::from(mask).trailing_zeros() == 32 =>
                {
                    svc = svc.with_netmask(Netmask::V4(mask));
                }
                _ => {
                    d.error(
                        &m.span(),
                        format!(
                            "`netmask`: \"{s}\" is not an IPv4 netmask (such as 255.255.255.0)"
                        ),
                    );
                    ok = false;
                }
            }
        } else {
            ok = false;
        }
    }
    if let Some(p) = f.get("prefix") {
        if family != AddressFamily::Inet6 {
            d.error(
                &p.span(),
                "`prefix` is for an IPv6 service; an IPv4 one takes `netmask`",
            );
            ok = false;
        } else if let Some(n) = read::integer(d, "prefix", p, 1, 128) {
            svc = svc.with_netmask(Netmask::V6(u8::try_from(n).ok()?));
        } else {
            ok = false;
        }
    }
    if let Some(e) = f.get("engine") {
        match read::string(d, "engine", e) {
            Some(name) if !name.is_empty() && name.len() <= ipvsnl::PE_NAME_MAX => {
                svc = svc.with_persistence_engine(name);
            }
            Some(name) => {
                d.error(
                    &e.span(),
                    format!(
                        "`engine`: \"{name}\" must be 1 to {} characters",
                        ipvsnl::PE_NAME_MAX
                    ),
                );
                ok = false;
            }
            None => ok = false,
        }
    }
    let svc = svc.with_persistence(u32::try_from(timeout?).ok()?);
    ok.then_some(svc)
}

fn quorum(d: &mut Diagnostics<'_>, v: &Value<'_>) -> Option<(Quorum, Range<usize>)> {
    let f = Fields::open(d, v, "`quorum`", QUORUM)?;
    let mut q = Quorum::default();
    let mut span = v.span();
    let mut ok = true;
    if let Some(m) = f.get("min_weight") {
        span = m.span();
        match read::integer(d, "min_weight", m, 1, u64::from(u32::MAX)) {
            Some(n) => q.min_weight = n,
            None => ok = false,
        }
    }
    if let Some(b) = f.get("below") {
        match read::word(
            d,
            "below",
            b,
            &[("keep", Below::Keep), ("withdraw", Below::Withdraw)],
        ) {
            Some(below) => q.below = below,
            None => ok = false,
        }
    }
    ok.then_some((q, span))
}

fn service(d: &mut Diagnostics<'_>, v: &Value<'_>) -> Option<(VirtualService, ServiceSpans)> {
    let f = Fields::open(d, v, "a `[[service]]`", SERVICE)?;
    let errors_before = d.count();
    let name = match f.get("name") {
        Some(v) => match read::string(d, "name", v) {
            Some("") => {
                d.error(
                    &v.span(),
                    "`name` must not be empty (leave it out for no name)",
                );
                None
            }
            other => other.map(str::to_string),
        },
        None => None,
    };
    let name_span = f.get("name").map(|v| v.span());
    let persistent = f.get("persistence").is_some();
    let key = service_key(d, &f, persistent);
    let sched = f.get("scheduler").map(|v| scheduler(d, v));
    // A wrong scheduler's flags are not judged against it.
    let flags = match &sched {
        Some(None) => None,
        _ => f
            .get("scheduler_flags")
            .map(|v| scheduler_flags(d, v, sched.as_ref().and_then(Option::as_ref))),
    };
    let one_packet = f
        .get("one_packet")
        .map(|v| read::boolean(d, "one_packet", v));
    let remove = f
        .get("remove_after_drain")
        .map(|v| read::boolean(d, "remove_after_drain", v));
    let default_check: Option<Option<HealthCheck>> = f.get("check").map(|v| health_check(d, v));
    let quorum = f.get("quorum").map(|v| quorum(d, v));

    let (key, key_span) = match &key {
        Some((k, span)) => (Some(*k), span.clone()),
        None => (None, f.span()),
    };
    let inherited = default_check.clone().unwrap_or(None);
    let mut servers = Vec::new();
    let mut server_spans = Vec::new();
    match f.get("server") {
        Some(list) => {
            for s in read::tables(d, "server", "service.server", list) {
                if let Some((server, span)) = real_server(d, s, key.as_ref(), inherited.as_ref()) {
                    servers.push(server);
                    server_spans.push(span);
                }
            }
        }
        None => d.error(
            &key_span,
            "a service needs at least one `[[service.server]]`",
        ),
    }
    let sorry = f
        .get("sorry_server")
        .and_then(|v| sorry_server(d, v, key.as_ref()));
    // A service whose key is wrong is not kept (the file is refused
    // anyway); one whose other parts are wrong is, with defaults in their
    // place, so that the checks across services still see it.
    let key = key?;
    let mut svc = Service::new(key);
    if let Some(Some(s)) = sched {
        svc = svc.with_scheduler(s);
    }
    if let Some(Some(fl)) = flags {
        svc = svc.with_flags(fl);
    }
    if one_packet == Some(Some(true)) {
        svc = svc.with_flags(ServiceFlags::ONE_PACKET);
    }
    if let Some(p) = f.get("persistence") {
        if let Some(with) = persistence(d, p, svc.clone()) {
            svc = with;
        }
    }
    let (quorum, quorum_span) = match quorum.flatten() {
        Some((q, s)) => (q, Some(s)),
        None => (Quorum::default(), None),
    };
    let clean = d.count() == errors_before;
    let (sorry, sorry_span) = match sorry {
        Some((dest, span)) => (Some(dest), Some(span)),
        None => (None, None),
    };
    let vs = VirtualService {
        name,
        service: svc,
        servers,
        sorry,
        quorum,
        remove_after_drain: remove.flatten().unwrap_or(false),
    };
    let spans = ServiceSpans {
        key: key_span,
        name: name_span,
        servers: server_spans,
        sorry: sorry_span,
        quorum: quorum_span,
        clean,
    };
    Some((vs, spans))
}
