//! Unit tests of `IP_VS_SO_GET_DESTS`: the x86-64 layout of its structs
//! (as gcc lays out `ip_vs.h`), the request's bytes, and entries
//! read as the kernel fills them.

use super::*;

/// The x86-64 layout, as gcc lays out `ip_vs.h` there (the 64-bit byte
/// counters align the entries to 8, so the header is 24 bytes, not 20).
#[cfg(target_arch = "x86_64")]
#[test]
fn the_mirrors_have_the_x86_64_layout_of_ip_vs_h() {
    assert_eq!(DESTS_HEADER_SIZE, 24);
    assert_eq!(DEST_ENTRY_SIZE, 96);
    assert_eq!(offset_of!(CGetDests, addr), 4);
    assert_eq!(offset_of!(CGetDests, port), 8);
    assert_eq!(offset_of!(CGetDests, fwmark), 12);
    assert_eq!(offset_of!(CGetDests, num_dests), 16);
    assert_eq!(offset_of!(CDestEntry, port), 4);
    assert_eq!(offset_of!(CDestEntry, conn_flags), 8);
    assert_eq!(offset_of!(CDestEntry, weight), 12);
    assert_eq!(offset_of!(CDestEntry, u_threshold), 16);
    assert_eq!(offset_of!(CDestEntry, persistconns), 32);
    assert_eq!(offset_of!(CDestEntry, stats), 40);
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_request_names_its_service_and_marks_every_entry_empty() {
    let q = DestsQuery::service(17, Ipv4Addr::new(10, 1, 2, 3), 53);
    let buf = dests_request(&q, 3).unwrap();
    assert_eq!(buf.len(), 24 + 3 * 96);
    assert_eq!(&buf[0..2], &17u16.to_ne_bytes());
    assert_eq!(&buf[4..8], &[10, 1, 2, 3]);
    assert_eq!(&buf[8..10], &[0, 53], "the port in network order");
    assert_eq!(&buf[12..16], &[0; 4]);
    assert_eq!(&buf[16..20], &3u32.to_ne_bytes());
    for slot in 0..3 {
        let e = &buf[24 + slot * 96..24 + (slot + 1) * 96];
        assert_eq!(&e[12..16], &[0xff; 4], "slot {slot}'s weight");
        assert!(e[..12].iter().chain(&e[16..]).all(|&b| b == 0));
    }
    let f = dests_request(&DestsQuery::fwmark(0x1234), 0).unwrap();
    assert_eq!(f.len(), 24);
    assert_eq!(&f[12..16], &0x1234u32.to_ne_bytes());
    assert_eq!(&f[0..12], &[0; 12]);
}

/// Writes destination `i` as the kernel would (the x86-64 offsets pinned
/// above): the kernel copies the whole entry, zeroed where unset.
#[cfg(target_arch = "x86_64")]
fn fill(buf: &mut [u8], i: usize, addr: [u8; 4], port: u16, conn_flags: u32, weight: u32) {
    let e = &mut buf[24 + i * 96..24 + (i + 1) * 96];
    e.fill(0);
    e[0..4].copy_from_slice(&addr);
    e[4..6].copy_from_slice(&port.to_be_bytes());
    e[8..12].copy_from_slice(&conn_flags.to_ne_bytes());
    e[12..16].copy_from_slice(&weight.to_ne_bytes());
    e[16..20].copy_from_slice(&100u32.to_ne_bytes());
    e[20..24].copy_from_slice(&10u32.to_ne_bytes());
    e[24..28].copy_from_slice(&7u32.to_ne_bytes());
    e[28..32].copy_from_slice(&8u32.to_ne_bytes());
    e[32..36].copy_from_slice(&9u32.to_ne_bytes());
    e[40..44].copy_from_slice(&11u32.to_ne_bytes()); // stats.conns
    e[56..64].copy_from_slice(&(1u64 << 33).to_ne_bytes()); // stats.inbytes
}

#[cfg(target_arch = "x86_64")]
#[test]
fn filled_entries_are_read_up_to_the_first_left_empty() {
    let mut buf = dests_request(&DestsQuery::fwmark(1), 3).unwrap();
    // Masquerade with the kernel's inactive bit (0x100), weight 0; then a
    // tunnel with the no-output bit (0x4000).
    fill(&mut buf, 0, [10, 0, 1, 1], 8080, 0x100, 0);
    fill(&mut buf, 1, [10, 0, 1, 2], 0, 0x4000 | 2, 5);
    let got: Vec<SockoptDest> = SockoptDests::new(&buf).collect();
    assert_eq!(got.len(), 2, "the third entry was left empty");
    let d = &got[0];
    assert_eq!((d.addr, d.port), (Ipv4Addr::new(10, 0, 1, 1), 8080));
    assert_eq!(
        (d.forward_method(), d.weight, d.is_tunnelled()),
        (0, 0, false)
    );
    assert_eq!((d.upper_threshold, d.lower_threshold), (100, 10));
    assert_eq!(
        (d.active_conns, d.inactive_conns, d.persistent_conns),
        (7, 8, 9)
    );
    assert_eq!((d.stats.conns, d.stats.inbytes), (11, 1 << 33));
    assert_eq!((got[1].forward_method(), got[1].weight), (2, 5));
    assert!(got[1].is_tunnelled());
    // Every slot filled: read to the end.
    fill(&mut buf, 2, [10, 0, 1, 3], 1, 3, i32::MAX as u32);
    assert_eq!(SockoptDests::new(&buf).count(), 3);
}

#[test]
fn short_buffers_hold_no_entry() {
    assert_eq!(SockoptDests::new(&[]).count(), 0);
    let buf = dests_request(&DestsQuery::fwmark(1), 1).unwrap();
    assert_eq!(SockoptDests::new(&buf[..buf.len() - 1]).count(), 0);
    assert!(SockoptDest::decode(&[0; 10]).is_none());
    if usize::BITS == 32 {
        assert!(dests_request(&DestsQuery::fwmark(1), u32::MAX).is_none());
    }
}
