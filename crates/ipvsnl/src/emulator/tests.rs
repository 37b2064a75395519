//! The emulated kernel at the socket: datagrams in, datagrams out, as the
//! kernel frames them.

use std::net::IpAddr;

use ipvsnl_wire::netlink_packet_core::{
    NLMSG_DONE, NLMSG_ERROR, NLM_F_ACK, NLM_F_DUMP, NLM_F_MULTIPART, NLM_F_REQUEST,
};
use ipvsnl_wire::write::{begin_ipvs_message, end_message};
use ipvsnl_wire::IpvsCommand;

use super::{Fault, Kernel, Port, When, INIT_NETNS};
use crate::block_on::block_on;
use crate::proto::Wait;
use crate::transport::{Received, Transport};
use crate::{Request, Service, ServiceKey};

fn key(i: u16) -> ServiceKey {
    ServiceKey::tcp(IpAddr::from([10, 0, (i >> 8) as u8, i as u8]), 80)
}

fn with_services(n: u16) -> Kernel {
    let k = Kernel::new();
    let requests: Vec<Request> = (1..=n)
        .map(|i| Request::add_service(Service::new(key(i))))
        .collect();
    assert!(k.init_netns().apply(&requests).iter().all(|&e| e == 0));
    k
}

/// A service dump request.
fn list_services(family: u16, seq: u32) -> Vec<u8> {
    let mut out = Vec::new();
    let m = begin_ipvs_message(
        &mut out,
        family,
        NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP,
        seq,
        IpvsCommand::GetService,
    );
    end_message(&mut out, m);
    out
}

/// Every datagram the port has for a reader of `segment` bytes.
fn read_all(port: &mut Port, segment: usize) -> Vec<(Vec<u8>, bool)> {
    let mut out = Vec::new();
    let mut rx = vec![0; segment];
    let mut got = [Received::default(); 1];
    while let Ok(n) = block_on(port.receive(&mut rx, segment, &mut got, Wait::Queued)) {
        assert_eq!(n, 1);
        let len = got[0].len.min(segment);
        out.push((rx[..len].to_vec(), got[0].truncated));
    }
    out
}

/// (type, flags) of each message of a datagram.
fn headers(d: &[u8]) -> Vec<(u16, u16)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 16 <= d.len() {
        let len = u32::from_ne_bytes(d[at..at + 4].try_into().unwrap()) as usize;
        out.push((
            u16::from_ne_bytes([d[at + 4], d[at + 5]]),
            u16::from_ne_bytes([d[at + 6], d[at + 7]]),
        ));
        at += (len + 3) & !3;
    }
    out
}

fn errno(d: &[u8]) -> i32 {
    -i32::from_ne_bytes(d[16..20].try_into().unwrap())
}

#[test]
fn a_dump_comes_in_parts_of_the_kernels_size_then_done_alone() {
    let k = with_services(100);
    let family = k.family_id().unwrap();
    let mut port = Port::open(&k, INIT_NETNS);
    block_on(port.send(&list_services(family, 7))).unwrap();
    let parts = read_all(&mut port, 4096);
    let (done, data) = parts.split_last().unwrap();
    assert_eq!(headers(&done.0), [(NLMSG_DONE, NLM_F_MULTIPART)]);
    let mut services = 0;
    for (i, (d, truncated)) in data.iter().enumerate() {
        assert!(!truncated);
        for (kind, flags) in headers(d) {
            assert_eq!((kind, flags), (family, NLM_F_MULTIPART));
            services += 1;
        }
        // The first part was written before any receive: a page less the
        // kernel's overhead; the later ones fill the reader's 4 KiB (the
        // last holds the rest).
        assert!(d.len() <= 4096, "{}", d.len());
        if i + 1 < data.len() {
            assert!(d.len() > 3776 - 400, "a part not filled: {}", d.len());
        }
    }
    assert_eq!(services, 100);
    assert!(data.len() >= 8, "{} parts", data.len());
}

#[test]
fn a_second_dump_on_the_socket_is_busy_and_the_first_goes_on() {
    let k = with_services(100);
    let family = k.family_id().unwrap();
    let mut port = Port::open(&k, INIT_NETNS);
    let mut two = list_services(family, 1);
    two.extend(list_services(family, 2));
    block_on(port.send(&two)).unwrap();
    let all = read_all(&mut port, 4096);
    let busy: Vec<_> = all
        .iter()
        .filter(|(d, _)| headers(d)[0].0 == NLMSG_ERROR)
        .collect();
    assert_eq!(busy.len(), 1);
    assert_eq!(errno(&busy[0].0), libc::EBUSY);
    let listed: usize = all
        .iter()
        .map(|(d, _)| headers(d).iter().filter(|h| h.0 == family).count())
        .sum();
    assert_eq!(listed, 100);
}

#[test]
fn a_batch_gets_an_ack_or_an_error_for_each_request() {
    let k = Kernel::new();
    let family = k.family_id().unwrap();
    let mut port = Port::open(&k, INIT_NETNS);
    let mut batch = Vec::new();
    let add = Request::add_service(Service::new(key(1)));
    for (seq, r) in [(1, &add), (2, &add), (3, &Request::DeleteService(key(2)))] {
        crate::request::encode(&mut batch, family, seq, NLM_F_REQUEST | NLM_F_ACK, r);
    }
    block_on(port.send(&batch)).unwrap();
    let replies: Vec<i32> = read_all(&mut port, 4096)
        .iter()
        .map(|(d, _)| errno(d))
        .collect();
    assert_eq!(replies, [0, libc::EEXIST, libc::ESRCH]);
}

#[test]
fn parts_sized_for_a_larger_receive_come_truncated_to_a_smaller_one() {
    let k = with_services(300);
    let family = k.family_id().unwrap();
    let mut port = Port::open(&k, INIT_NETNS);
    // One 64 KiB receive (nothing queued), then 4 KiB ones.
    assert!(read_all(&mut port, 65536).is_empty());
    block_on(port.send(&list_services(family, 1))).unwrap();
    let parts = read_all(&mut port, 4096);
    assert!(parts.iter().any(|(_, truncated)| *truncated));
}

/// The services of a dump's datagrams, in order.
fn keys_listed(parts: &[(Vec<u8>, bool)], family: u16) -> Vec<ServiceKey> {
    let mut out = Vec::new();
    for (d, _) in parts {
        let mut at = 0;
        while at + 16 <= d.len() {
            let len = u32::from_ne_bytes(d[at..at + 4].try_into().unwrap()) as usize;
            if u16::from_ne_bytes([d[at + 4], d[at + 5]]) == family {
                let attrs = &d[at + 20..at + len];
                let e = crate::decode::service_reply(attrs, crate::decode::Detail::Full).unwrap();
                out.push(e.service.key);
            }
            at += (len + 3) & !3;
        }
    }
    out
}

#[test]
fn a_writer_between_two_parts_makes_the_dump_skip_an_entry() {
    let k = with_services(60);
    let family = k.family_id().unwrap();
    let before: Vec<ServiceKey> = k.init_netns().table().iter().map(|e| *e.key()).collect();
    k.inject(
        When::DumpPart(2),
        Fault::Foreign(vec![Request::DeleteService(before[0])]),
    );
    let mut port = Port::open(&k, INIT_NETNS);
    block_on(port.send(&list_services(family, 1))).unwrap();
    let parts = read_all(&mut port, 4096);
    let first = keys_listed(&parts[..1], family).len();
    let listed = keys_listed(&parts, family);
    // The second part starts after as many entries as the first held,
    // counted from the new start: the one after the first part is
    // skipped; the deleted one was listed.
    assert!(first > 1 && first < 59, "{first}");
    assert_eq!(listed.len(), 59);
    assert_eq!(listed[0], before[0]);
    assert!(!listed.contains(&before[first]));
    assert_eq!(listed[first], before[first + 1]);
}

#[test]
fn a_stale_family_id_is_enoent_and_a_lookup_finds_the_new_one() {
    let k = Kernel::new();
    let old = k.family_id().unwrap();
    k.reload_module();
    let new = k.family_id().unwrap();
    assert_ne!(old, new);
    let mut port = Port::open(&k, INIT_NETNS);
    let mut out = Vec::new();
    crate::request::encode(&mut out, old, 1, NLM_F_REQUEST | NLM_F_ACK, &Request::Flush);
    block_on(port.send(&out)).unwrap();
    let replies = read_all(&mut port, 4096);
    assert_eq!(errno(&replies[0].0), libc::ENOENT);
}
