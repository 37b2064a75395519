//! Typed requests: one value per kernel operation, encoded into one IPVS
//! message. The pipelined batch API and the sync engine take these.

use std::fmt;
use std::net::IpAddr;

use ipvsnl_wire::netlink_packet_core::{NlaBuffer, NlasIterator, Parseable};
use ipvsnl_wire::write::{begin_ipvs_message, begin_nest, end_message, end_nest, push_attr};
use ipvsnl_wire::write::{push_str, MessageStart};
use ipvsnl_wire::{
    DaemonAttr, FlagsMask, IpvsAttr, IpvsCommand, IpvsMessage, ServiceAttr, IPVS_CMD_ATTR_DEST,
    IPVS_CMD_ATTR_SERVICE, IPVS_DEST_ATTR_ADDR, IPVS_DEST_ATTR_ADDR_FAMILY,
    IPVS_DEST_ATTR_FWD_METHOD, IPVS_DEST_ATTR_L_THRESH, IPVS_DEST_ATTR_PORT,
    IPVS_DEST_ATTR_TUN_FLAGS, IPVS_DEST_ATTR_TUN_PORT, IPVS_DEST_ATTR_TUN_TYPE,
    IPVS_DEST_ATTR_U_THRESH, IPVS_DEST_ATTR_WEIGHT, IPVS_SVC_ATTR_ADDR, IPVS_SVC_ATTR_AF,
    IPVS_SVC_ATTR_FLAGS, IPVS_SVC_ATTR_FWMARK, IPVS_SVC_ATTR_NETMASK, IPVS_SVC_ATTR_PE_NAME,
    IPVS_SVC_ATTR_PORT, IPVS_SVC_ATTR_PROTOCOL, IPVS_SVC_ATTR_SCHED_NAME, IPVS_SVC_ATTR_TIMEOUT,
};

use crate::fixed_attrs::FixedAttrs;
use crate::proto::Encode;
use crate::{
    AddressFamily, DaemonRole, Destination, Error, Object, Service, ServiceFlags, ServiceKey,
    SyncDaemon, Target, Timeouts,
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
    /// Counting the IPv4 services (the socket option `IP_VS_SO_GET_INFO`,
    /// not netlink).
    CountServices,
    /// Copying every IPv4 service at once (the socket option
    /// `IP_VS_SO_GET_SERVICES`, not netlink).
    SnapshotServices,
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
            CountServices => "count IPv4 services (IP_VS_SO_GET_INFO)",
            SnapshotServices => "copy IPv4 services (IP_VS_SO_GET_SERVICES)",
        })
    }
}

/// One change to the kernel's IPVS state.
///
/// ```
/// use ipvsnl::{Destination, Request, Service, ServiceKey};
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// let ops = vec![
///     Request::AddService(Box::new(Service::new(key))),
///     Request::AddDestination(key, Destination::new("10.0.1.1".parse().unwrap(), 80)),
/// ];
/// assert!(ops.iter().all(|r| r.validate().is_ok()));
/// assert_eq!(ops[1].to_string(), "add destination 10.0.1.1:80 to TCP 10.0.0.1:80");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Request {
    /// Add a service. Boxed, like the edit: a service is larger than any
    /// other request's payload, and unboxed it made every request of a
    /// plan 96 bytes instead of 72 (a cold create of 100,000 services x 10
    /// destinations: 177 bytes of desired state plus plan per destination
    /// before, 158 after; `benches/SCALE.md`).
    AddService(Box<Service>),
    /// Replace a service's settings (scheduler, flags, persistence).
    EditService(Box<Service>),
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
    /// The service this request is about (`None` for one about no single
    /// service: a flush, a zero of everything, timeouts, the daemon).
    ///
    /// ```
    /// use ipvsnl::{Request, ServiceKey};
    /// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
    /// assert_eq!(Request::DeleteService(key).service_key(), Some(key));
    /// assert_eq!(Request::Flush.service_key(), None);
    /// ```
    pub fn service_key(&self) -> Option<ServiceKey> {
        match self {
            Request::AddService(s) | Request::EditService(s) => Some(s.key),
            Request::DeleteService(k)
            | Request::AddDestination(k, _)
            | Request::EditDestination(k, _)
            | Request::DeleteDestination(k, _, _) => Some(*k),
            _ => None,
        }
    }

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

    /// What the request is, of what: the target its errors name.
    pub fn target(&self) -> Target {
        let kind = self.kind();
        let dest = |service: &ServiceKey, addr: IpAddr, port: u16| Object::Destination {
            service: *service,
            addr,
            port,
        };
        match self {
            Request::AddService(s) | Request::EditService(s) => {
                Target::new(kind, Object::Service(s.key))
                    .with_modules(&s.scheduler.to_string(), s.persistence_engine.as_deref())
            }
            Request::DeleteService(k) | Request::Zero(Some(k)) => {
                Target::new(kind, Object::Service(*k))
            }
            Request::AddDestination(k, d) | Request::EditDestination(k, d) => {
                Target::new(kind, dest(k, d.addr, d.port))
            }
            Request::DeleteDestination(k, a, p) => Target::new(kind, dest(k, *a, *p)),
            Request::Zero(None) | Request::Flush | Request::SetTimeouts(_) => {
                Target::new(kind, Object::Table)
            }
            Request::StartDaemon(d) => Target::new(
                kind,
                Object::Daemon {
                    role: d.role,
                    interface: Some(d.interface.clone()),
                },
            ),
            Request::StopDaemon(r) => Target::new(
                kind,
                Object::Daemon {
                    role: *r,
                    interface: None,
                },
            ),
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
            // The kernel's bound is INT_MAX / HZ seconds, and HZ is the
            // kernel's own: it is the only one that can check that. What
            // is above INT_MAX it reads as a negative int and refuses
            // whatever its HZ: that much is checked here.
            Request::SetTimeouts(t) => t.validate(),
            Request::StartDaemon(d) => d.validate(),
        }
    }

    /// The IPVS command of this request.
    fn command(&self) -> IpvsCommand {
        use IpvsCommand as C;
        match self {
            Request::AddService(_) => C::NewService,
            Request::EditService(_) => C::SetService,
            Request::DeleteService(_) => C::DelService,
            Request::AddDestination(..) => C::NewDest,
            Request::EditDestination(..) => C::SetDest,
            Request::DeleteDestination(..) => C::DelDest,
            Request::Zero(_) => C::Zero,
            Request::Flush => C::Flush,
            Request::SetTimeouts(_) => C::SetConfig,
            Request::StartDaemon(_) => C::NewDaemon,
            Request::StopDaemon(_) => C::DelDaemon,
        }
    }

    /// The IPVS message for this request.
    pub fn to_message(&self) -> IpvsMessage {
        let attrs = match self {
            Request::AddService(s) | Request::EditService(s) => {
                vec![IpvsAttr::Service(full_service(s))]
            }
            Request::DeleteService(k) => vec![service_key_nest(k)],
            Request::AddDestination(k, d) | Request::EditDestination(k, d) => {
                let dest = owned::<_, DEST_NEST_MAX>(|f| fixed_dest(d, f));
                vec![service_key_nest(k), IpvsAttr::Dest(dest)]
            }
            Request::DeleteDestination(k, a, p) => {
                let dest = owned::<_, DEST_NEST_MAX>(|f| fixed_dest_id(a, *p, f));
                vec![service_key_nest(k), IpvsAttr::Dest(dest)]
            }
            Request::Zero(k) => k.iter().map(service_key_nest).collect(),
            Request::Flush => vec![],
            Request::SetTimeouts(t) => vec![
                IpvsAttr::TimeoutTcp(t.tcp),
                IpvsAttr::TimeoutTcpFin(t.tcp_fin),
                IpvsAttr::TimeoutUdp(t.udp),
            ],
            Request::StartDaemon(d) => vec![IpvsAttr::Daemon(daemon_nest(d))],
            Request::StopDaemon(r) => vec![IpvsAttr::Daemon(vec![DaemonAttr::State(r.to_raw())])],
        };
        IpvsMessage::new(self.command(), attrs)
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.target(), f)
    }
}

impl Encode for Request {
    fn encode(&self, out: &mut Vec<u8>, family: u16, seq: u32, flags: u16) {
        encode(out, family, seq, flags, self);
    }

    /// A stop of a sync daemon whose thread has not run yet is answered
    /// with nothing (the kernel passes on the thread's `EINTR`, and netlink
    /// sends no reply to that code), though the daemon is stopped.
    fn may_go_unanswered(&self) -> bool {
        matches!(self, Request::StopDaemon(_))
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

/// The owned attributes of what `write` writes: the request encoder's bytes
/// read back with the owned parse, so the two forms come from one list of
/// attributes (the bytes written here always parse).
fn owned<A, const N: usize>(write: impl FnOnce(&mut FixedAttrs<N>)) -> Vec<A>
where
    A: for<'a> Parseable<NlaBuffer<&'a [u8]>>,
{
    let mut f = FixedAttrs::<N>::new();
    write(&mut f);
    NlasIterator::new(f.as_bytes())
        .filter_map(|nla| A::parse(&nla.ok()?).ok())
        .collect()
}

/// `IPVS_CMD_ATTR_SERVICE` with only the key.
pub(crate) fn service_key_nest(k: &ServiceKey) -> IpvsAttr {
    IpvsAttr::Service(owned::<_, KEY_NEST_MAX>(|f| fixed_key(k, f)))
}

/// The flags of a service as sent: all of them replaced, "hashed" never
/// set (the kernel's own mark).
fn service_flags(s: &Service) -> FlagsMask {
    FlagsMask::replace((s.flags - ServiceFlags::HASHED).bits())
}

/// Every attribute of a service, in the order the encoder writes them.
fn full_service(s: &Service) -> Vec<ServiceAttr> {
    let mut attrs = owned::<_, KEY_NEST_MAX>(|f| fixed_key(&s.key, f));
    attrs.push(ServiceAttr::Scheduler(s.scheduler.name().to_owned()));
    if let Some(pe) = &s.persistence_engine {
        attrs.push(ServiceAttr::PersistenceEngine(pe.clone()));
    }
    attrs.extend(owned::<_, SETTINGS_MAX>(|f| fixed_settings(s, f)));
    attrs
}

/// The most bytes of a service key nest: its header, the family, the
/// protocol, a 16-byte address and the port.
const KEY_NEST_MAX: usize = 4 + 8 + 8 + 20 + 8;
/// The most bytes of a destination nest: its header, a 16-byte address and
/// nine attributes of at most 4 bytes.
const DEST_NEST_MAX: usize = 4 + 20 + 9 * 8;
/// A service's flags (8 bytes), timeout and netmask.
const SETTINGS_MAX: usize = 12 + 8 + 8;

/// Writes the key nest of a service.
#[inline(always)]
fn fixed_key_nest<const N: usize>(k: &ServiceKey, f: &mut FixedAttrs<N>) {
    let nest = f.begin_nest(IPVS_CMD_ATTR_SERVICE);
    fixed_key(k, f);
    f.end_nest(nest);
}

/// Writes the identifying attributes of a service.
#[inline(always)]
fn fixed_key<const N: usize>(k: &ServiceKey, f: &mut FixedAttrs<N>) {
    match *k {
        ServiceKey::Inet {
            protocol,
            addr,
            port,
        } => {
            f.put(
                IPVS_SVC_ATTR_AF,
                AddressFamily::of(&addr).to_raw().to_ne_bytes(),
            );
            f.put(IPVS_SVC_ATTR_PROTOCOL, protocol.to_raw().to_ne_bytes());
            f.put(IPVS_SVC_ATTR_ADDR, addr_bytes(&addr));
            f.put(IPVS_SVC_ATTR_PORT, port.to_be_bytes());
        }
        ServiceKey::Fwmark { mark, family } => {
            f.put(IPVS_SVC_ATTR_AF, family.to_raw().to_ne_bytes());
            f.put(IPVS_SVC_ATTR_FWMARK, mark.to_ne_bytes());
        }
    }
}

/// Writes a service's settings after its names: flags, timeout, netmask.
#[inline(always)]
fn fixed_settings<const N: usize>(s: &Service, f: &mut FixedAttrs<N>) {
    let flags = service_flags(s);
    let mut both = [0u8; 8];
    both[..4].copy_from_slice(&flags.flags.to_ne_bytes());
    both[4..].copy_from_slice(&flags.mask.to_ne_bytes());
    f.put(IPVS_SVC_ATTR_FLAGS, both);
    f.put(IPVS_SVC_ATTR_TIMEOUT, s.timeout.to_ne_bytes());
    f.put(IPVS_SVC_ATTR_NETMASK, s.netmask.to_wire());
}

/// Writes every attribute of a destination.
#[inline(always)]
fn fixed_dest<const N: usize>(d: &Destination, f: &mut FixedAttrs<N>) {
    let tunnel = d.forward.tunnel().copied().unwrap_or_default();
    f.put(
        IPVS_DEST_ATTR_ADDR_FAMILY,
        d.family().to_raw().to_ne_bytes(),
    );
    f.put(IPVS_DEST_ATTR_ADDR, addr_bytes(&d.addr));
    f.put(IPVS_DEST_ATTR_PORT, d.port.to_be_bytes());
    f.put(IPVS_DEST_ATTR_FWD_METHOD, d.forward.to_raw().to_ne_bytes());
    f.put(IPVS_DEST_ATTR_WEIGHT, d.weight.to_ne_bytes());
    f.put(IPVS_DEST_ATTR_TUN_TYPE, [tunnel.kind.to_raw()]);
    f.put(IPVS_DEST_ATTR_TUN_PORT, tunnel.port.to_be_bytes());
    f.put(IPVS_DEST_ATTR_TUN_FLAGS, tunnel.flags.bits().to_ne_bytes());
    f.put(IPVS_DEST_ATTR_U_THRESH, d.upper_threshold.to_ne_bytes());
    f.put(IPVS_DEST_ATTR_L_THRESH, d.lower_threshold.to_ne_bytes());
}

/// Writes the attributes that identify a destination of a service.
#[inline(always)]
fn fixed_dest_id<const N: usize>(addr: &IpAddr, port: u16, f: &mut FixedAttrs<N>) {
    f.put(
        IPVS_DEST_ATTR_ADDR_FAMILY,
        AddressFamily::of(addr).to_raw().to_ne_bytes(),
    );
    f.put(IPVS_DEST_ATTR_ADDR, addr_bytes(addr));
    f.put(IPVS_DEST_ATTR_PORT, port.to_be_bytes());
}

/// Appends `IPVS_CMD_ATTR_SERVICE`, written directly: the key, and the
/// names and settings of `full`.
pub(crate) fn push_service_nest(out: &mut Vec<u8>, key: &ServiceKey, full: Option<&Service>) {
    let Some(s) = full else {
        let mut f = FixedAttrs::<KEY_NEST_MAX>::new();
        fixed_key_nest(key, &mut f);
        out.extend_from_slice(f.as_bytes());
        return;
    };
    let nest = begin_nest(out, IPVS_CMD_ATTR_SERVICE);
    let mut f = FixedAttrs::<KEY_NEST_MAX>::new();
    fixed_key(key, &mut f);
    out.extend_from_slice(f.as_bytes());
    push_str(out, IPVS_SVC_ATTR_SCHED_NAME, s.scheduler.name());
    if let Some(pe) = &s.persistence_engine {
        push_str(out, IPVS_SVC_ATTR_PE_NAME, pe);
    }
    let mut f = FixedAttrs::<SETTINGS_MAX>::new();
    fixed_settings(s, &mut f);
    out.extend_from_slice(f.as_bytes());
    end_nest(out, nest);
}

/// Appends the key nest of `k` and a destination nest of what `dest`
/// writes, in one copy.
#[inline(always)]
fn push_key_and_dest(
    out: &mut Vec<u8>,
    k: &ServiceKey,
    dest: impl FnOnce(&mut FixedAttrs<{ KEY_NEST_MAX + DEST_NEST_MAX }>),
) {
    let mut f = FixedAttrs::new();
    fixed_key_nest(k, &mut f);
    let nest = f.begin_nest(IPVS_CMD_ATTR_DEST);
    dest(&mut f);
    f.end_nest(nest);
    out.extend_from_slice(f.as_bytes());
}

/// Appends one request as a netlink message: written directly for the
/// service and destination requests a sync sends by the thousand (byte for
/// byte what [`Request::to_message`] gives, without building it), from
/// that message for the others. Returns where the message starts.
pub(crate) fn encode(
    out: &mut Vec<u8>,
    family: u16,
    seq: u32,
    flags: u16,
    r: &Request,
) -> MessageStart {
    let msg = begin_ipvs_message(out, family, flags, seq, r.command());
    match r {
        Request::AddService(s) | Request::EditService(s) => push_service_nest(out, &s.key, Some(s)),
        Request::DeleteService(k) => push_service_nest(out, k, None),
        Request::AddDestination(k, d) | Request::EditDestination(k, d) => {
            push_key_and_dest(out, k, |f| fixed_dest(d, f))
        }
        Request::DeleteDestination(k, a, p) => {
            push_key_and_dest(out, k, |f| fixed_dest_id(a, *p, f))
        }
        other => {
            for a in &other.to_message().attrs {
                push_attr(out, a);
            }
        }
    }
    end_message(out, msg);
    msg
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

#[cfg(test)]
mod tests;
