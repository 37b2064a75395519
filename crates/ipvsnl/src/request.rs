//! Typed requests: one value per kernel operation, encoded into one IPVS
//! message. The pipelined batch API and the sync engine take these.

use std::fmt;
use std::net::IpAddr;

use ipvsnl_wire::{
    DaemonAttr, DestAttr, FlagsMask, IpvsAttr, IpvsCommand, IpvsMessage, ServiceAttr,
};

use crate::{
    AddressFamily, DaemonRole, Destination, Error, Service, ServiceFlags, ServiceKey, SyncDaemon,
    Timeouts,
};

/// What kind of request failed: named in errors and reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RequestKind {
    /// Resolving the IPVS family id.
    ResolveFamily,
    /// `NEW_SERVICE`.
    AddService,
    /// `SET_SERVICE`.
    EditService,
    /// `DEL_SERVICE`.
    DeleteService,
    /// `GET_SERVICE` (one).
    GetService,
    /// `GET_SERVICE` dump.
    ListServices,
    /// `NEW_DEST`.
    AddDestination,
    /// `SET_DEST`.
    EditDestination,
    /// `DEL_DEST`.
    DeleteDestination,
    /// `GET_DEST` dump.
    ListDestinations,
    /// `NEW_DAEMON`.
    StartDaemon,
    /// `DEL_DAEMON`.
    StopDaemon,
    /// `GET_DAEMON` dump.
    ListDaemons,
    /// `SET_CONFIG`.
    SetTimeouts,
    /// `GET_CONFIG`.
    GetTimeouts,
    /// `GET_INFO`.
    GetInfo,
    /// `ZERO`.
    Zero,
    /// `FLUSH`.
    Flush,
    /// Reading the totals (`/proc/net/ip_vs_stats`, not netlink).
    Totals,
}

impl fmt::Display for RequestKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use RequestKind::*;
        f.write_str(match self {
            ResolveFamily => "resolve IPVS family",
            AddService => "add service",
            EditService => "edit service",
            DeleteService => "delete service",
            GetService => "get service",
            ListServices => "list services",
            AddDestination => "add destination",
            EditDestination => "edit destination",
            DeleteDestination => "delete destination",
            ListDestinations => "list destinations of",
            StartDaemon => "start sync daemon",
            StopDaemon => "stop sync daemon",
            ListDaemons => "list sync daemons",
            SetTimeouts => "set timeouts",
            GetTimeouts => "get timeouts",
            GetInfo => "get info",
            Zero => "zero counters",
            Flush => "flush",
            Totals => "read totals",
        })
    }
}

/// One change to the kernel's IPVS state.
///
/// ```
/// use ipvsnl::{Destination, Request, Service, ServiceKey};
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// let ops = vec![
///     Request::AddService(Service::new(key)),
///     Request::AddDestination(key, Destination::new("10.0.1.1".parse().unwrap(), 80)),
/// ];
/// assert!(ops.iter().all(|r| r.validate().is_ok()));
/// assert_eq!(ops[1].to_string(), "add destination 10.0.1.1:80 to TCP 10.0.0.1:80");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Request {
    /// Add a service.
    AddService(Service),
    /// Replace a service's settings (scheduler, flags, persistence).
    EditService(Service),
    /// Delete a service and its destinations.
    DeleteService(ServiceKey),
    /// Add a destination to a service.
    AddDestination(ServiceKey, Destination),
    /// Replace a destination's settings.
    EditDestination(ServiceKey, Destination),
    /// Delete a destination (by address and port).
    DeleteDestination(ServiceKey, IpAddr, u16),
    /// Zero the counters of one service, or of everything.
    Zero(Option<ServiceKey>),
    /// Delete every service.
    Flush,
    /// Set the connection timeouts (0 leaves one unchanged).
    SetTimeouts(Timeouts),
    /// Start a sync daemon.
    StartDaemon(SyncDaemon),
    /// Stop the sync daemon of a role.
    StopDaemon(DaemonRole),
}

impl Request {
    /// The kind of request.
    pub fn kind(&self) -> RequestKind {
        match self {
            Request::AddService(_) => RequestKind::AddService,
            Request::EditService(_) => RequestKind::EditService,
            Request::DeleteService(_) => RequestKind::DeleteService,
            Request::AddDestination(..) => RequestKind::AddDestination,
            Request::EditDestination(..) => RequestKind::EditDestination,
            Request::DeleteDestination(..) => RequestKind::DeleteDestination,
            Request::Zero(_) => RequestKind::Zero,
            Request::Flush => RequestKind::Flush,
            Request::SetTimeouts(_) => RequestKind::SetTimeouts,
            Request::StartDaemon(_) => RequestKind::StartDaemon,
            Request::StopDaemon(_) => RequestKind::StopDaemon,
        }
    }

    /// What the request is about, in words (used in error messages).
    pub fn target(&self) -> String {
        match self {
            Request::AddService(s) | Request::EditService(s) => {
                let mut t = format!("{} scheduler {}", s.key, s.scheduler);
                if let Some(pe) = &s.persistence_engine {
                    t.push_str(&format!(" pe {pe}"));
                }
                t
            }
            Request::DeleteService(k) | Request::Zero(Some(k)) => k.to_string(),
            Request::AddDestination(k, d) | Request::EditDestination(k, d) => {
                format!(
                    "{} {} {}",
                    dest_label(&d.addr, d.port),
                    preposition(self),
                    k
                )
            }
            Request::DeleteDestination(k, a, p) => format!("{} from {}", dest_label(a, *p), k),
            Request::Zero(None) | Request::Flush | Request::SetTimeouts(_) => String::new(),
            Request::StartDaemon(d) => format!("{:?} on {}", d.role, d.interface),
            Request::StopDaemon(r) => format!("{r:?}"),
        }
    }

    /// Checks the request as the kernel would, before anything is sent.
    pub fn validate(&self) -> Result<(), Error> {
        match self {
            Request::AddService(s) | Request::EditService(s) => s.validate(),
            Request::DeleteService(k) | Request::Zero(Some(k)) => k.validate(),
            Request::AddDestination(k, d) | Request::EditDestination(k, d) => {
                k.validate()?;
                d.validate_for(k)
            }
            Request::DeleteDestination(k, _, _) => k.validate(),
            Request::Zero(None) | Request::Flush | Request::StopDaemon(_) => Ok(()),
            Request::SetTimeouts(t) => {
                let max = i32::MAX as u32 / 1000;
                for (name, v) in [("tcp", t.tcp), ("tcpfin", t.tcp_fin), ("udp", t.udp)] {
                    if v > max {
                        return Err(Error::invalid(
                            "timeout",
                            format!("{name} timeout {v} s is above the kernel's limit"),
                        ));
                    }
                }
                Ok(())
            }
            Request::StartDaemon(d) => d.validate(),
        }
    }

    /// The IPVS message for this request.
    pub fn to_message(&self) -> IpvsMessage {
        use IpvsCommand as C;
        let (command, attrs) = match self {
            Request::AddService(s) => (C::NewService, vec![IpvsAttr::Service(full_service(s))]),
            Request::EditService(s) => (C::SetService, vec![IpvsAttr::Service(full_service(s))]),
            Request::DeleteService(k) => (C::DelService, vec![service_key_nest(k)]),
            Request::AddDestination(k, d) => (C::NewDest, vec![service_key_nest(k), full_dest(d)]),
            Request::EditDestination(k, d) => (C::SetDest, vec![service_key_nest(k), full_dest(d)]),
            Request::DeleteDestination(k, a, p) => (
                C::DelDest,
                vec![
                    service_key_nest(k),
                    IpvsAttr::Dest(vec![
                        DestAttr::AddressFamily(AddressFamily::of(a).to_raw()),
                        DestAttr::Address(addr_bytes(a)),
                        DestAttr::Port(*p),
                    ]),
                ],
            ),
            Request::Zero(k) => (C::Zero, k.iter().map(service_key_nest).collect()),
            Request::Flush => (C::Flush, vec![]),
            Request::SetTimeouts(t) => (
                C::SetConfig,
                vec![
                    IpvsAttr::TimeoutTcp(t.tcp),
                    IpvsAttr::TimeoutTcpFin(t.tcp_fin),
                    IpvsAttr::TimeoutUdp(t.udp),
                ],
            ),
            Request::StartDaemon(d) => (C::NewDaemon, vec![IpvsAttr::Daemon(daemon_nest(d))]),
            Request::StopDaemon(r) => (
                C::DelDaemon,
                vec![IpvsAttr::Daemon(vec![DaemonAttr::State(r.to_raw())])],
            ),
        };
        IpvsMessage::new(command, attrs)
    }
}

fn preposition(r: &Request) -> &'static str {
    match r {
        Request::AddDestination(..) => "to",
        _ => "of",
    }
}

fn dest_label(addr: &IpAddr, port: u16) -> String {
    match addr {
        IpAddr::V4(a) => format!("{a}:{port}"),
        IpAddr::V6(a) => format!("[{a}]:{port}"),
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let target = match self {
            Request::AddService(s) | Request::EditService(s) => s.key.to_string(),
            _ => self.target(),
        };
        if target.is_empty() {
            write!(f, "{}", self.kind())
        } else {
            write!(f, "{} {}", self.kind(), target)
        }
    }
}

/// The 16-byte address union.
pub(crate) fn addr_bytes(addr: &IpAddr) -> [u8; 16] {
    let mut out = [0u8; 16];
    match addr {
        IpAddr::V4(a) => out[..4].copy_from_slice(&a.octets()),
        IpAddr::V6(a) => out = a.octets(),
    }
    out
}

/// The identifying attributes of a service.
pub(crate) fn service_key_attrs(k: &ServiceKey) -> Vec<ServiceAttr> {
    match k {
        ServiceKey::Inet {
            protocol,
            addr,
            port,
        } => vec![
            ServiceAttr::AddressFamily(AddressFamily::of(addr).to_raw()),
            ServiceAttr::Protocol(protocol.to_raw()),
            ServiceAttr::Address(addr_bytes(addr)),
            ServiceAttr::Port(*port),
        ],
        ServiceKey::Fwmark { mark, family } => vec![
            ServiceAttr::AddressFamily(family.to_raw()),
            ServiceAttr::Fwmark(*mark),
        ],
    }
}

/// `IPVS_CMD_ATTR_SERVICE` with only the key.
pub(crate) fn service_key_nest(k: &ServiceKey) -> IpvsAttr {
    IpvsAttr::Service(service_key_attrs(k))
}

fn full_service(s: &Service) -> Vec<ServiceAttr> {
    let mut attrs = service_key_attrs(&s.key);
    attrs.push(ServiceAttr::Scheduler(s.scheduler.name().to_owned()));
    if let Some(pe) = &s.persistence_engine {
        attrs.push(ServiceAttr::PersistenceEngine(pe.clone()));
    }
    attrs.push(ServiceAttr::Flags(FlagsMask::replace(
        (s.flags - ServiceFlags::HASHED).bits(),
    )));
    attrs.push(ServiceAttr::Timeout(s.timeout));
    attrs.push(ServiceAttr::Netmask(s.netmask.to_wire()));
    attrs
}

fn full_dest(d: &Destination) -> IpvsAttr {
    let tunnel = d.forward.tunnel().copied().unwrap_or_default();
    IpvsAttr::Dest(vec![
        DestAttr::AddressFamily(d.family().to_raw()),
        DestAttr::Address(addr_bytes(&d.addr)),
        DestAttr::Port(d.port),
        DestAttr::ForwardMethod(d.forward.to_raw()),
        DestAttr::Weight(d.weight),
        DestAttr::TunnelType(tunnel.kind.to_raw()),
        DestAttr::TunnelPort(tunnel.port),
        DestAttr::TunnelFlags(tunnel.flags.bits()),
        DestAttr::UpperThreshold(d.upper_threshold),
        DestAttr::LowerThreshold(d.lower_threshold),
    ])
}

fn daemon_nest(d: &SyncDaemon) -> Vec<DaemonAttr> {
    let mut attrs = vec![
        DaemonAttr::State(d.role.to_raw()),
        DaemonAttr::Interface(d.interface.clone()),
        DaemonAttr::SyncId(d.sync_id),
    ];
    if let Some(len) = d.max_len {
        attrs.push(DaemonAttr::SyncMaxLen(len));
    }
    if let Some(port) = d.port {
        attrs.push(DaemonAttr::McastPort(port));
    }
    if let Some(ttl) = d.ttl {
        attrs.push(DaemonAttr::McastTtl(ttl));
    }
    match d.group {
        Some(IpAddr::V4(g)) => attrs.push(DaemonAttr::McastGroup(g.octets())),
        Some(IpAddr::V6(g)) => attrs.push(DaemonAttr::McastGroup6(g.octets())),
        None => {}
    }
    attrs
}
