//! The socket's faults at the datagram level: an overrun as the kernel's
//! (the error first, what was queued before it kept, every reply after it
//! dropped until the queue is read empty), a queue limit that never loses
//! a dump part.

use std::net::IpAddr;

use ipvsnl_wire::netlink_packet_core::{NLM_F_ACK, NLM_F_REQUEST};

use super::{Fault, Kernel, Port, When, INIT_NETNS};
use crate::block_on::block_on;
use crate::proto::Wait;
use crate::transport::{Received, Transport};
use crate::{Request, Service, ServiceKey};

fn add(i: u8) -> Request {
    Request::add_service(Service::new(ServiceKey::tcp(
        IpAddr::from([10, 3, 0, i]),
        80,
    )))
}

/// A datagram of `requests`, each asking for an ACK.
fn batch(family: u16, requests: &[Request]) -> Vec<u8> {
    let mut out = Vec::new();
    for (seq, r) in (1..).zip(requests) {
        crate::request::encode(&mut out, family, seq, NLM_F_REQUEST | NLM_F_ACK, r);
    }
    out
}

/// One receive: the errno of the error (or ACK) it read, or the
/// receive's own error.
fn receive(port: &mut Port) -> Result<i32, i32> {
    let mut rx = vec![0; 4096];
    let mut got = [Received::default(); 1];
    match block_on(port.receive(&mut rx, 4096, &mut got, Wait::Queued)) {
        Ok(_) => Ok(-i32::from_ne_bytes(rx[16..20].try_into().unwrap())),
        Err(e) => Err(e.raw_os_error().unwrap()),
    }
}

#[test]
fn an_overrun_reports_first_keeps_what_was_queued_and_drops_until_read_empty() {
    let k = Kernel::new();
    let family = k.family_id().unwrap();
    let mut port = Port::open(&k, INIT_NETNS);
    // The second add's error is lost to an overrun; the third's ACK finds
    // the socket congested.
    k.inject(When::nth_change(2), Fault::Overrun);
    block_on(port.send(&batch(family, &[add(1), add(1), add(2)]))).unwrap();
    assert_eq!(receive(&mut port), Err(libc::ENOBUFS));
    assert_eq!(receive(&mut port), Ok(0), "the first ACK, queued before");
    assert_eq!(receive(&mut port), Err(libc::EAGAIN), "the rest dropped");
    assert_eq!(k.init_netns().table().len(), 2, "all three run");
    // Read empty: replies come again.
    block_on(port.send(&batch(family, &[add(3)]))).unwrap();
    assert_eq!(receive(&mut port), Ok(0));
}

#[test]
fn a_queue_limit_drops_replies_past_it() {
    let k = Kernel::new();
    let family = k.family_id().unwrap();
    let mut port = Port::open(&k, INIT_NETNS);
    k.inject(When::next_request(), Fault::QueueLimit(2));
    let adds: Vec<Request> = (1..=5).map(add).collect();
    block_on(port.send(&batch(family, &adds))).unwrap();
    assert_eq!(receive(&mut port), Err(libc::ENOBUFS));
    assert_eq!(receive(&mut port), Ok(0));
    assert_eq!(receive(&mut port), Ok(0));
    assert_eq!(receive(&mut port), Err(libc::EAGAIN));
    assert_eq!(k.init_netns().table().len(), 5);
}

#[test]
fn a_send_that_fails_is_not_taken() {
    let k = Kernel::new();
    let family = k.family_id().unwrap();
    let mut port = Port::open(&k, INIT_NETNS);
    k.inject(When::nth_change(2), Fault::SendFails(libc::ENOMEM));
    let e = block_on(port.send(&batch(family, &[add(1), add(2)]))).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOMEM));
    assert!(
        k.init_netns().table().is_empty(),
        "none of its requests run"
    );
    assert!(k.requests().is_empty());
}
