//! One line's scanned options to one [`Request`]: which options each
//! command takes, what it needs, and the service, destination, timeouts
//! or sync daemon they describe.

use std::net::IpAddr;

use super::error::LineError;
use super::options::{Given, Opt, Scanned};
use super::value;
use crate::rules::Names;
use crate::{
    DaemonRole, Destination, Forward, Protocol, Request, Service, ServiceFlags, ServiceKey,
    SyncDaemon, Timeouts, Tunnel, TunnelFlags, TunnelKind, IFNAME_MAX, PE_NAME_MAX, THRESHOLD_MAX,
    TIMEOUT_MAX, WEIGHT_MAX,
};

/// The persistence timeout of a `-p` without a value, in seconds:
/// ipvsadm 1.31's (its manual page says 300; the program uses 360).
///
/// ```
/// use ipvsnl::rules::{parse_line, Numeric, DEFAULT_PERSISTENCE_TIMEOUT};
/// use ipvsnl::{Request, Service, ServiceKey};
/// let r = parse_line("-A -t 10.0.0.1:80 -p", &Numeric).unwrap();
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// let want = Service::new(key).with_persistence(DEFAULT_PERSISTENCE_TIMEOUT);
/// assert_eq!(r, Request::AddService(Box::new(want)));
/// ```
pub const DEFAULT_PERSISTENCE_TIMEOUT: u32 = 360;

/// The sync daemon interface when `--start-daemon` names none (ipvsadm's).
///
/// ```
/// use ipvsnl::rules::{parse_line, Numeric, DEFAULT_SYNC_INTERFACE};
/// use ipvsnl::Request;
/// let Request::StartDaemon(d) = parse_line("--start-daemon master", &Numeric).unwrap() else {
///     panic!("not a start");
/// };
/// assert_eq!(d.interface, DEFAULT_SYNC_INTERFACE);
/// ```
pub const DEFAULT_SYNC_INTERFACE: &str = "eth0";

const SERVICE: &[Opt] = &[Opt::Tcp, Opt::Udp, Opt::Sctp, Opt::Fwmark, Opt::Ipv6];
const SERVICE_SETTINGS: &[Opt] = &[
    Opt::Scheduler,
    Opt::Persistent,
    Opt::Netmask,
    Opt::SchedFlags,
    Opt::OnePacket,
    Opt::Pe,
];
const SERVER_SETTINGS: &[Opt] = &[
    Opt::Gatewaying,
    Opt::Ipip,
    Opt::Masquerading,
    Opt::Weight,
    Opt::UpperThreshold,
    Opt::LowerThreshold,
    Opt::TunType,
    Opt::TunPort,
    Opt::TunNocsum,
    Opt::TunCsum,
    Opt::TunRemcsum,
];
const DAEMON_SETTINGS: &[Opt] = &[
    Opt::McastInterface,
    Opt::SyncId,
    Opt::McastGroup,
    Opt::McastPort,
    Opt::McastTtl,
    Opt::SyncMaxlen,
];

const NEEDS_SERVICE: &str = "a service (-t, -u or --sctp-service ADDRESS:PORT, or -f MARK)";
const NEEDS_SERVER: &str = "a real server (-r ADDRESS[:PORT])";

/// Whether `opt` may appear with `command`.
fn allowed(command: Opt, opt: Opt) -> bool {
    let lists: &[&[Opt]] = match command {
        Opt::AddService | Opt::EditService => &[SERVICE, SERVICE_SETTINGS],
        Opt::DeleteService | Opt::Zero => &[SERVICE],
        Opt::AddServer | Opt::EditServer => &[SERVICE, &[Opt::RealServer], SERVER_SETTINGS],
        Opt::DeleteServer => &[SERVICE, &[Opt::RealServer]],
        Opt::StartDaemon => &[DAEMON_SETTINGS],
        Opt::StopDaemon => &[&[Opt::SyncId]],
        _ => &[],
    };
    lists.iter().any(|l| l.contains(&opt))
}

/// The request of a scanned line.
pub(super) fn request(line: &Scanned<'_>, names: &dyn Names) -> Result<Request, LineError> {
    let command = line.command.opt;
    for g in &line.options {
        if !allowed(command, g.opt) {
            return Err(LineError::NotAllowed {
                option: g.spelling.to_owned(),
                command: line.command.spelling.to_owned(),
            });
        }
    }
    if command != Opt::SetTimeouts {
        if let Some(word) = line.positional.first() {
            return Err(LineError::UnexpectedArgument {
                argument: (*word).to_owned(),
            });
        }
    }
    let request = match command {
        Opt::AddService => Request::AddService(Box::new(service(line, names)?)),
        Opt::EditService => Request::EditService(Box::new(service(line, names)?)),
        Opt::DeleteService => Request::DeleteService(required_key(line, names)?),
        Opt::AddServer => {
            let key = required_key(line, names)?;
            Request::AddDestination(key, destination(line, &key, names)?)
        }
        Opt::EditServer => {
            let key = required_key(line, names)?;
            Request::EditDestination(key, destination(line, &key, names)?)
        }
        Opt::DeleteServer => {
            let key = required_key(line, names)?;
            let (addr, port) = real_server(line, &key, names)?;
            Request::DeleteDestination(key, addr, port)
        }
        Opt::Clear => Request::Flush,
        Opt::Zero => Request::Zero(key(line, names)?),
        Opt::SetTimeouts => Request::SetTimeouts(timeouts(line)?),
        Opt::StartDaemon => Request::StartDaemon(daemon(line)?),
        Opt::StopDaemon => {
            if let Some(g) = line.get(Opt::SyncId) {
                value::number("sync id", value_of(g), 0, 255)?;
            }
            Request::StopDaemon(role(&line.command)?)
        }
        _ => {
            return Err(LineError::NotARulesCommand {
                command: line.command.spelling.to_owned(),
            })
        }
    };
    request
        .validate()
        .map_err(|e| LineError::Invalid { why: e.to_string() })?;
    Ok(request)
}

/// The value of an option that takes one (the scanner saw to it).
fn value_of<'a>(g: &Given<'a>) -> &'a str {
    g.value.unwrap_or_default()
}

/// The protocol name ports are looked up under, for a service.
/// (A fwmark service has no protocol; its real servers' ports are named
/// as TCP ports, as ipvsadm does.)
fn lookup_name(key: &ServiceKey) -> &'static str {
    match key {
        ServiceKey::Inet {
            protocol: Protocol::Udp,
            ..
        } => "udp",
        ServiceKey::Inet {
            protocol: Protocol::Sctp,
            ..
        } => "sctp",
        _ => "tcp",
    }
}

/// The service the line names, if it names one.
fn key(line: &Scanned<'_>, names: &dyn Names) -> Result<Option<ServiceKey>, LineError> {
    let six = line.get(Opt::Ipv6);
    let given = line
        .options
        .iter()
        .find(|g| matches!(g.opt, Opt::Tcp | Opt::Udp | Opt::Sctp | Opt::Fwmark));
    let Some(g) = given else {
        return match six {
            Some(six) => Err(LineError::Invalid {
                why: format!("{} needs a fwmark service (-f MARK)", six.spelling),
            }),
            None => Ok(None),
        };
    };
    let text = value_of(g);
    let (protocol, name) = match g.opt {
        Opt::Fwmark => {
            let family = if six.is_some() {
                crate::AddressFamily::Inet6
            } else {
                crate::AddressFamily::Inet
            };
            return Ok(Some(ServiceKey::fwmark(value::fwmark(text)?, family)));
        }
        Opt::Udp => (Protocol::Udp, "udp"),
        Opt::Sctp => (Protocol::Sctp, "sctp"),
        _ => (Protocol::Tcp, "tcp"),
    };
    if let Some(six) = six {
        return Err(LineError::Invalid {
            why: format!(
                "{} is only for fwmark services; {} takes its family from its address",
                six.spelling, g.spelling
            ),
        });
    }
    let (addr, port) = value::endpoint("service address", text, name, names)?;
    Ok(Some(ServiceKey::Inet {
        protocol,
        addr,
        port: port.unwrap_or(0),
    }))
}

fn required_key(line: &Scanned<'_>, names: &dyn Names) -> Result<ServiceKey, LineError> {
    key(line, names)?.ok_or_else(|| LineError::Missing {
        command: line.command.spelling.to_owned(),
        what: NEEDS_SERVICE,
    })
}

/// The service of an `-A` or `-E` line.
fn service(line: &Scanned<'_>, names: &dyn Names) -> Result<Service, LineError> {
    let key = required_key(line, names)?;
    let mut svc = Service::new(key);
    if let Some(g) = line.get(Opt::Scheduler) {
        svc.scheduler = value::scheduler(value_of(g))?;
    }
    if let Some(g) = line.get(Opt::Persistent) {
        let timeout = match g.value {
            Some(t) => value::number_u32("persistence timeout", t, 0, u32::MAX)?,
            None => DEFAULT_PERSISTENCE_TIMEOUT,
        };
        svc = svc.with_persistence(timeout);
    }
    if let Some(g) = line.get(Opt::Netmask) {
        svc.netmask = value::netmask(value_of(g), key.family())?;
        // The netmask is the granularity of persistence: without -p it
        // does nothing, and `ipvsadm -S` (so the printer) leaves it out.
        if line.get(Opt::Persistent).is_none() {
            return Err(LineError::Invalid {
                why: format!(
                    "{} needs -p: a netmask is the granularity of persistence",
                    g.spelling
                ),
            });
        }
    }
    if let Some(g) = line.get(Opt::Pe) {
        svc.persistence_engine = Some(value::bounded_name(
            "persistence engine",
            value_of(g),
            PE_NAME_MAX,
            true,
        )?);
    }
    if let Some(g) = line.get(Opt::OnePacket) {
        let udp_or_mark = match key {
            ServiceKey::Inet { protocol, .. } => protocol == Protocol::Udp,
            _ => true,
        };
        if !udp_or_mark {
            return Err(LineError::Invalid {
                why: format!(
                    "{} (one-packet scheduling) is only for UDP and fwmark services",
                    g.spelling
                ),
            });
        }
        svc.flags |= ServiceFlags::ONE_PACKET;
    }
    if let Some(g) = line.get(Opt::SchedFlags) {
        svc.flags |= value::sched_flags(value_of(g), &svc.scheduler)?;
    }
    if let ServiceKey::Inet { port: 0, .. } = key {
        if !svc.flags.contains(ServiceFlags::PERSISTENT) {
            return Err(LineError::Invalid {
                why: format!("{key} has port 0, which only a persistent service (-p) may have"),
            });
        }
    }
    Ok(svc)
}

/// The real server of the line: its address and port (the service's
/// port when the text gives none).
fn real_server(
    line: &Scanned<'_>,
    key: &ServiceKey,
    names: &dyn Names,
) -> Result<(IpAddr, u16), LineError> {
    let g = line
        .get(Opt::RealServer)
        .ok_or_else(|| LineError::Missing {
            command: line.command.spelling.to_owned(),
            what: NEEDS_SERVER,
        })?;
    let (addr, port) =
        value::endpoint("real server address", value_of(g), lookup_name(key), names)?;
    let service_port = match key {
        ServiceKey::Inet { port, .. } => *port,
        _ => 0,
    };
    Ok((addr, port.unwrap_or(service_port)))
}

/// The destination of an `-a` or `-e` line.
fn destination(
    line: &Scanned<'_>,
    key: &ServiceKey,
    names: &dyn Names,
) -> Result<Destination, LineError> {
    let (addr, port) = real_server(line, key, names)?;
    let tunnel_option = line.options.iter().find(|g| is_tunnel_option(g.opt));
    if let (Some(g), false) = (tunnel_option, line.has(Opt::Ipip)) {
        return Err(LineError::Invalid {
            why: format!("{} is only for tunnelled real servers (-i)", g.spelling),
        });
    }
    let tunnel = tunnel(line)?;
    let forward = if line.has(Opt::Masquerading) {
        Forward::Masquerade
    } else if line.has(Opt::Ipip) {
        Forward::Tunnel(tunnel.unwrap_or_default())
    } else {
        Forward::Route
    };
    let mut dest = Destination::new(addr, port).with_forward(forward);
    if let Some(g) = line.get(Opt::Weight) {
        dest.weight = value::number_u32("weight", value_of(g), 0, WEIGHT_MAX)?;
    }
    if let Some(g) = line.get(Opt::UpperThreshold) {
        dest.upper_threshold = value::number_u32("upper threshold", value_of(g), 0, THRESHOLD_MAX)?;
    }
    if let Some(g) = line.get(Opt::LowerThreshold) {
        dest.lower_threshold = value::number_u32("lower threshold", value_of(g), 0, THRESHOLD_MAX)?;
    }
    Ok(dest)
}

fn is_tunnel_option(opt: Opt) -> bool {
    matches!(
        opt,
        Opt::TunType | Opt::TunPort | Opt::TunNocsum | Opt::TunCsum | Opt::TunRemcsum
    )
}

/// The tunnel the `--tun-*` options describe; `None` without any.
fn tunnel(line: &Scanned<'_>) -> Result<Option<Tunnel>, LineError> {
    if !line.options.iter().any(|g| is_tunnel_option(g.opt)) {
        return Ok(None);
    }
    let kind = match line.get(Opt::TunType).map(value_of) {
        None | Some("ipip") => TunnelKind::Ipip,
        Some("gue") => TunnelKind::Gue,
        Some("gre") => TunnelKind::Gre,
        Some(other) => {
            return Err(LineError::BadValue {
                what: "tunnel type",
                value: other.to_owned(),
                expected: "ipip, gue or gre".to_owned(),
            })
        }
    };
    let checksum = line
        .options
        .iter()
        .find(|g| matches!(g.opt, Opt::TunNocsum | Opt::TunCsum | Opt::TunRemcsum));
    let type_name = line.get(Opt::TunType).map_or("ipip", value_of);
    let port = match (line.get(Opt::TunPort), kind) {
        (Some(g), TunnelKind::Gue) => value::number("tunnel port", value_of(g), 1, 65535)? as u16,
        (None, TunnelKind::Gue) => {
            return Err(LineError::Invalid {
                why: "a gue tunnel needs --tun-port PORT".to_owned(),
            })
        }
        (Some(g), _) => {
            return Err(LineError::Invalid {
                why: format!("{} is only for gue tunnels, not {type_name}", g.spelling),
            })
        }
        (None, _) => 0,
    };
    let flags = match checksum {
        Some(g) if kind == TunnelKind::Ipip => {
            return Err(LineError::Invalid {
                why: format!("{} is for gue and gre tunnels, not ipip", g.spelling),
            })
        }
        Some(g) if g.opt == Opt::TunCsum => TunnelFlags::CSUM,
        Some(g) if g.opt == Opt::TunRemcsum => TunnelFlags::REMCSUM,
        _ => TunnelFlags::empty(),
    };
    Ok(Some(Tunnel { kind, port, flags }))
}

/// The three timeouts of a `--set` line.
fn timeouts(line: &Scanned<'_>) -> Result<Timeouts, LineError> {
    let [tcp, fin, udp] = line.positional[..] else {
        if let Some(extra) = line.positional.get(3) {
            return Err(LineError::UnexpectedArgument {
                argument: (*extra).to_owned(),
            });
        }
        return Err(LineError::Missing {
            command: line.command.spelling.to_owned(),
            what: "three timeouts in seconds (TCP TCPFIN UDP; 0 leaves one unchanged)",
        });
    };
    let t = |what, text| value::number_u32(what, text, 0, TIMEOUT_MAX);
    Ok(Timeouts::new(
        t("TCP timeout", tcp)?,
        t("TCP FIN timeout", fin)?,
        t("UDP timeout", udp)?,
    ))
}

/// The role of a `--start-daemon` or `--stop-daemon` line.
fn role(command: &Given<'_>) -> Result<DaemonRole, LineError> {
    match value_of(command) {
        "master" => Ok(DaemonRole::Master),
        "backup" => Ok(DaemonRole::Backup),
        other => Err(LineError::BadValue {
            what: "sync daemon role",
            value: other.to_owned(),
            expected: "master or backup".to_owned(),
        }),
    }
}

/// The daemon of a `--start-daemon` line.
fn daemon(line: &Scanned<'_>) -> Result<SyncDaemon, LineError> {
    let role = role(&line.command)?;
    let interface = match line.get(Opt::McastInterface) {
        Some(g) => value::bounded_name("multicast interface", value_of(g), IFNAME_MAX, false)?,
        None => DEFAULT_SYNC_INTERFACE.to_owned(),
    };
    let mut d = SyncDaemon::new(role, interface);
    if let Some(g) = line.get(Opt::SyncId) {
        d.sync_id = value::number_u32("sync id", value_of(g), 0, 255)?;
    }
    if let Some(g) = line.get(Opt::SyncMaxlen) {
        d.max_len = Some(value::number("sync message length", value_of(g), 1, 65507)? as u16);
    }
    if let Some(g) = line.get(Opt::McastGroup) {
        d.group = Some(value::multicast(value_of(g))?);
    }
    if let Some(g) = line.get(Opt::McastPort) {
        d.port = Some(value::number("multicast port", value_of(g), 1, 65535)? as u16);
    }
    if let Some(g) = line.get(Opt::McastTtl) {
        d.ttl = Some(value::number("multicast TTL", value_of(g), 1, 255)? as u8);
    }
    Ok(d)
}
