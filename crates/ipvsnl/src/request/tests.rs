//! Unit tests of the request encoders: the direct encoder writes the
//! bytes the generic message would.

use ipvsnl_wire::netlink_packet_core::NLM_F_REQUEST;
use ipvsnl_wire::{DestAttr, FlagsMask, IpvsAttr, ServiceAttr};

use super::*;
use crate::proto::frame;
use crate::{
    AddressFamily, DaemonRole, Destination, Forward, Netmask, Scheduler, Service, ServiceFlags,
    ServiceKey, SyncDaemon, Timeouts, Tunnel, TunnelFlags, TunnelKind,
};

fn generic(r: &Request) -> Vec<u8> {
    let mut v = Vec::new();
    frame::push_request(&mut v, 0x25, 9, NLM_F_REQUEST, r.to_message());
    v
}

fn direct(r: &Request) -> Vec<u8> {
    let mut v = vec![0xaa; 3]; // encoding appends; offsets must not matter
    let start = encode(&mut v, 0x25, 9, NLM_F_REQUEST, r);
    assert_eq!(start.offset(), 3);
    v.split_off(3)
}

/// The owned form is the parse of the encoder's bytes: pinned here to
/// the attributes meant, value by value.
#[test]
fn owned_attributes_are_the_ones_meant() {
    let key = ServiceKey::udp("2001:db8::1".parse().unwrap(), 53);
    let d = Destination::new("10.1.2.3".parse().unwrap(), 8080)
        .with_weight(3)
        .with_thresholds(10, 2)
        .with_forward(Forward::Tunnel(Tunnel {
            kind: TunnelKind::Gue,
            port: 6080,
            flags: TunnelFlags::REMCSUM,
        }));
    let mut v6 = [0u8; 16];
    v6[..2].copy_from_slice(&[0x20, 0x01]);
    v6[2..4].copy_from_slice(&[0x0d, 0xb8]);
    v6[15] = 1;
    let key_attrs = vec![
        ServiceAttr::AddressFamily(libc::AF_INET6 as u16),
        ServiceAttr::Protocol(17),
        ServiceAttr::Address(v6),
        ServiceAttr::Port(53),
    ];
    let dest_attrs = vec![
        DestAttr::AddressFamily(libc::AF_INET as u16),
        DestAttr::Address([10, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
        DestAttr::Port(8080),
        DestAttr::ForwardMethod(2),
        DestAttr::Weight(3),
        DestAttr::TunnelType(1),
        DestAttr::TunnelPort(6080),
        DestAttr::TunnelFlags(TunnelFlags::REMCSUM.bits()),
        DestAttr::UpperThreshold(10),
        DestAttr::LowerThreshold(2),
    ];
    assert_eq!(
        Request::AddDestination(key, d).to_message().attrs,
        vec![
            IpvsAttr::Service(key_attrs.clone()),
            IpvsAttr::Dest(dest_attrs[..].to_vec())
        ]
    );
    assert_eq!(
        Request::DeleteDestination(key, d.addr, d.port)
            .to_message()
            .attrs,
        vec![
            IpvsAttr::Service(key_attrs.clone()),
            IpvsAttr::Dest(dest_attrs[..3].to_vec())
        ]
    );
    let s = Service::new(ServiceKey::fwmark(7, AddressFamily::Inet))
        .with_scheduler(Scheduler::Maglev)
        .with_persistence(300)
        .with_flags(ServiceFlags::HASHED | ServiceFlags::ONE_PACKET);
    assert_eq!(
        Request::add_service(s.clone()).to_message().attrs,
        vec![IpvsAttr::Service(vec![
            ServiceAttr::AddressFamily(libc::AF_INET as u16),
            ServiceAttr::Fwmark(7),
            ServiceAttr::Scheduler("mh".into()),
            ServiceAttr::Flags(FlagsMask::replace((s.flags - ServiceFlags::HASHED).bits())),
            ServiceAttr::Timeout(300),
            ServiceAttr::Netmask([255, 255, 255, 255]),
        ])]
    );
}

#[test]
fn direct_encoding_is_byte_identical_to_the_generic_one() {
    let v4 = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
    let v6 = ServiceKey::udp("2001:db8::1".parse().unwrap(), 53);
    let fw = ServiceKey::fwmark(7, AddressFamily::Inet6);
    let d = Destination::new("172.16.0.1".parse().unwrap(), 8080)
        .with_weight(3)
        .with_thresholds(10, 2);
    let gue = Destination::new("2001:db8::9".parse().unwrap(), 53).with_forward(Forward::Tunnel(
        Tunnel {
            kind: TunnelKind::Gue,
            port: 6080,
            flags: TunnelFlags::REMCSUM,
        },
    ));
    let reqs = [
        Request::add_service(Service::new(v4).with_scheduler(Scheduler::RoundRobin)),
        Request::add_service(
            Service::new(v6)
                .with_persistence(300)
                .with_netmask(Netmask::V6(64))
                .with_persistence_engine("sip")
                .with_flags(ServiceFlags::HASHED | ServiceFlags::ONE_PACKET),
        ),
        Request::edit_service(Service::new(fw).with_scheduler(Scheduler::Maglev)),
        Request::DeleteService(v4),
        Request::DeleteService(fw),
        Request::AddDestination(v4, d),
        Request::EditDestination(v6, gue),
        // The largest key with the largest destination: the fixed
        // buffer's full size.
        Request::AddDestination(v6, gue.with_thresholds(u32::MAX, u32::MAX)),
        Request::AddDestination(fw, d.with_forward(Forward::from_raw(7).unwrap())),
        Request::DeleteDestination(fw, d.addr, d.port),
        Request::DeleteDestination(v4, d.addr, d.port),
        Request::DeleteDestination(v6, gue.addr, gue.port),
        Request::Zero(Some(v6)),
        Request::Zero(None),
        Request::Flush,
        Request::SetTimeouts(Timeouts::new(1, 2, 3)),
        Request::StartDaemon(SyncDaemon::new(DaemonRole::Backup, "eth0").with_port(8848)),
        Request::StopDaemon(DaemonRole::Master),
    ];
    for r in &reqs {
        assert_eq!(direct(r), generic(r), "{r}");
    }
}
