//! Support, no test: an IPv6 VIP's unsolicited neighbour advertisement
//! checked field by field, its ICMPv6 checksum summed here independently
//! of the agent's. A module of the `host` test binary (the packet as
//! built) and the `vm` one (the frame caught on a real kernel), by
//! `#[path]`.

use std::net::Ipv6Addr;

use ipvs_agent::fleet::vip::unsolicited_na::ALL_NODES;

/// The ICMPv6 checksum as RFC 4443 2.3 defines it, summed here from the
/// packet's own bytes (its addresses, its payload length): zero when the
/// packet's checksum is right.
pub(crate) fn checksum_residue(packet: &[u8]) -> u16 {
    let payload_len = usize::from(u16::from_be_bytes([packet[4], packet[5]]));
    let mut pseudo = Vec::new();
    pseudo.extend_from_slice(&packet[8..40]);
    pseudo.extend_from_slice(&(payload_len as u32).to_be_bytes());
    pseudo.extend_from_slice(&[0, 0, 0, packet[6]]);
    pseudo.extend_from_slice(&packet[40..40 + payload_len]);
    if pseudo.len() % 2 == 1 {
        pseudo.push(0);
    }
    let mut sum: u64 = pseudo
        .chunks(2)
        .map(|w| u64::from(u16::from_be_bytes([w[0], w[1]])))
        .sum();
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Every field of an Ethernet frame carrying the advertisement of `vip`
/// from `mac`.
pub(crate) fn check_frame(frame: &[u8], mac: [u8; 6], vip: Ipv6Addr) {
    assert_eq!(frame.len(), 14 + 72, "{frame:02x?}");
    assert_eq!(&frame[0..6], &[0x33, 0x33, 0, 0, 0, 1], "to all nodes");
    assert_eq!(&frame[6..12], &mac, "from the interface's MAC");
    assert_eq!(&frame[12..14], &[0x86, 0xdd], "IPv6");
    let p = &frame[14..];
    assert_eq!(&p[0..4], &[0x60, 0, 0, 0], "version 6, no class, no flow");
    assert_eq!(&p[4..6], &[0, 32], "payload length");
    assert_eq!(p[6], 58, "ICMPv6");
    assert_eq!(p[7], 255, "hop limit");
    assert_eq!(&p[8..24], &vip.octets(), "from the VIP");
    assert_eq!(&p[24..40], &ALL_NODES.octets(), "to ff02::1");
    assert_eq!((p[40], p[41]), (136, 0), "neighbour advertisement, code 0");
    assert_eq!(checksum_residue(p), 0, "the ICMPv6 checksum");
    assert_ne!(&p[42..44], &[0, 0], "a checksum written");
    assert_eq!(
        &p[44..48],
        &[0x20, 0, 0, 0],
        "override; not router, not solicited"
    );
    assert_eq!(&p[48..64], &vip.octets(), "target: the VIP");
    assert_eq!((p[64], p[65]), (2, 1), "target link-layer address, 8 bytes");
    assert_eq!(&p[66..72], &mac, "the option's MAC");
}
