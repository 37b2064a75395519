//! The owned-message encoder: a request as an [`IpvsMessage`] of owned
//! attributes (what the generic framing writes, and what tests compare).

use std::net::IpAddr;

use ipvsnl_wire::netlink_packet_core::{NlaBuffer, NlasIterator, Parseable};
use ipvsnl_wire::{DaemonAttr, IpvsAttr, IpvsMessage, ServiceAttr};

use super::fixed::{
    fixed_dest, fixed_dest_id, fixed_key, fixed_settings, DEST_NEST_MAX, KEY_NEST_MAX, SETTINGS_MAX,
};
use super::value::Request;
use crate::fixed_attrs::FixedAttrs;
use crate::{Service, ServiceKey, SyncDaemon};

impl Request {
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
