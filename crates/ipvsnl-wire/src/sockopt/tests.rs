//! Unit tests of the socket-option structs: their layout on x86-64 (as
//! the kernel's `ip_vs.h` lays it out there) and the reading of entries as
//! the kernel fills them.

use super::*;

/// The x86-64 layout, worked out by hand from `ip_vs.h` (natural
/// alignment): the mirrors must agree with it.
#[cfg(target_arch = "x86_64")]
#[test]
fn the_mirrors_have_the_x86_64_layout_of_ip_vs_h() {
    assert_eq!(SockoptInfo::SIZE, 12);
    assert_eq!(SockoptServices::HEADER_SIZE, 8);
    assert_eq!(SERVICE_ENTRY_SIZE, 104);
    assert_eq!(offset_of!(CServiceEntry, addr), 4);
    assert_eq!(offset_of!(CServiceEntry, port), 8);
    assert_eq!(offset_of!(CServiceEntry, fwmark), 12);
    assert_eq!(offset_of!(CServiceEntry, sched_name), 16);
    assert_eq!(offset_of!(CServiceEntry, netmask), 40);
    assert_eq!(offset_of!(CServiceEntry, num_dests), 44);
    assert_eq!(offset_of!(CServiceEntry, stats), 48);
    assert_eq!(offset_of!(CStatsUser, inbytes), 16);
    assert_eq!(offset_of!(CStatsUser, outbps), 48);
}

/// Writes one entry at slot `i` of `buf` as the kernel would (at the x86-64
/// offsets, which the test above pins).
#[cfg(target_arch = "x86_64")]
fn fill(buf: &mut [u8], i: usize, proto: u16, addr: [u8; 4], port: u16, mark: u32, sched: &str) {
    let e = &mut buf[8 + i * 104..8 + (i + 1) * 104];
    e[0..2].copy_from_slice(&proto.to_ne_bytes());
    e[4..8].copy_from_slice(&addr);
    e[8..10].copy_from_slice(&port.to_be_bytes());
    e[12..16].copy_from_slice(&mark.to_ne_bytes());
    e[16..16 + sched.len()].copy_from_slice(sched.as_bytes());
    e[32..36].copy_from_slice(&1u32.to_ne_bytes()); // flags: persistent
    e[36..40].copy_from_slice(&300u32.to_ne_bytes());
    e[40..44].copy_from_slice(&[255, 255, 255, 0]);
    e[44..48].copy_from_slice(&5u32.to_ne_bytes());
    e[48..52].copy_from_slice(&7u32.to_ne_bytes()); // conns
    e[64..72].copy_from_slice(&(1u64 << 40).to_ne_bytes()); // inbytes
    e[96..100].copy_from_slice(&9u32.to_ne_bytes()); // outbps
}

#[cfg(target_arch = "x86_64")]
#[test]
fn filled_entries_are_read_in_order_up_to_the_first_empty_one() {
    let mut buf = services_request(4).unwrap();
    assert_eq!(buf.len(), 8 + 4 * 104);
    assert_eq!(u32::from_ne_bytes(buf[..4].try_into().unwrap()), 4);
    fill(&mut buf, 0, 6, [10, 0, 0, 1], 80, 0, "wlc");
    fill(&mut buf, 1, 6, [0; 4], 0, 5, "sh");
    let got: Vec<SockoptService> = SockoptServices::new(&buf).map(|e| e.service()).collect();
    assert_eq!(got.len(), 2, "the third slot is empty: the end");
    let first = SockoptServices::new(&buf).next().unwrap();
    assert_eq!(
        (first.protocol(), first.addr(), first.port(), first.fwmark()),
        (6, Ipv4Addr::new(10, 0, 0, 1), 80, 0)
    );
    let s = &got[0];
    assert_eq!(
        (s.protocol, s.addr, s.port, s.fwmark),
        (6, Ipv4Addr::new(10, 0, 0, 1), 80, 0)
    );
    assert_eq!(s.scheduler(), Some("wlc"));
    assert_eq!((s.flags, s.timeout, s.num_dests), (1, 300, 5));
    assert_eq!(s.netmask, Ipv4Addr::new(255, 255, 255, 0));
    assert_eq!(s.stats.conns, 7);
    assert_eq!(s.stats.inbytes, 1 << 40);
    assert_eq!(s.stats.outbps, 9);
    assert_eq!((got[1].fwmark, got[1].scheduler()), (5, Some("sh")));
    // A full buffer ends at its end.
    fill(&mut buf, 2, 17, [10, 0, 0, 2], 53, 0, "rr");
    fill(&mut buf, 3, 17, [10, 0, 0, 3], 53, 0, "a-name-of-16-ch!");
    let got: Vec<SockoptService> = SockoptServices::new(&buf).map(|e| e.service()).collect();
    assert_eq!(got.len(), 4);
    assert_eq!(got[3].scheduler(), Some("a-name-of-16-ch!"));
}

#[test]
fn short_buffers_are_no_entries_and_a_short_info_is_an_error() {
    assert_eq!(SockoptServices::new(&[]).count(), 0);
    assert_eq!(SockoptServices::new(&[1, 0, 0, 0]).count(), 0);
    let buf = services_request(1).unwrap();
    // One entry cut short is not read.
    assert_eq!(SockoptServices::new(&buf[..buf.len() - 1]).count(), 0);
    assert!(SockoptService::decode(&[0xff; 10]).is_none());
    let e = SockoptInfo::decode(&[0; 4]).unwrap_err();
    assert!(
        e.contains("IP_VS_SO_GET_INFO") && e.contains("4 bytes"),
        "{e}"
    );
}

#[test]
fn a_request_too_big_for_memory_is_refused_not_made() {
    if usize::BITS == 32 {
        assert!(services_request(u32::MAX).is_none());
    }
    assert_eq!(
        services_request(0).unwrap().len(),
        SockoptServices::HEADER_SIZE
    );
}
