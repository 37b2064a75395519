//! The leader's VIPs, anywhere (no kernel): `ADDR/PREFIX` parsed and bad
//! ones named, the gratuitous ARP frame byte for byte, the IPv6 neighbour
//! advertisement field by field and its checksum. Their kernel tests are
//! the VM's (`tests/vm/fleet_vip.rs`, `fleet_vip_na.rs`). Runs with `cargo test -p
//! ipvs-agent --features fleet`.

use std::net::{Ipv4Addr, Ipv6Addr};

use ipvs_agent::fleet::vip::addresses::Vip;
use ipvs_agent::fleet::vip::garp::arp_announcement;
use ipvs_agent::fleet::vip::unsolicited_na::{icmpv6_checksum, neighbour_advertisement, ALL_NODES};

use crate::fleet_na_frame::{check_frame, checksum_residue};

#[test]
fn vips_parse_and_bad_ones_are_named() {
    let v: Vip = "2001:db8::10/64".parse().unwrap();
    assert_eq!((v.address, v.prefix), ("2001:db8::10".parse().unwrap(), 64));
    assert_eq!(v.to_string(), "2001:db8::10/64");
    for (bad, message) in [
        ("192.0.2.1", "VIP `192.0.2.1`: expected ADDRESS/PREFIX"),
        (
            "192.0.2/24",
            "VIP `192.0.2/24`: `192.0.2` is not an IP address",
        ),
        (
            "192.0.2.1/x",
            "VIP `192.0.2.1/x`: `x` is not a prefix length",
        ),
        (
            "2001:db8::1/129",
            "VIP `2001:db8::1/129`: prefix length 129 is more than 128",
        ),
        (
            "0.0.0.0/0",
            "VIP `0.0.0.0/0`: not an address a director can answer for",
        ),
        (
            "127.0.0.1/8",
            "VIP `127.0.0.1/8`: not an address a director can answer for",
        ),
    ] {
        assert_eq!(bad.parse::<Vip>().unwrap_err(), message, "{bad}");
    }
}

#[test]
fn the_announcement_is_a_request_for_the_vip_from_the_vip() {
    let mac = [0x02, 0x11, 0x22, 0x33, 0x44, 0x55];
    let f = arp_announcement(mac, Ipv4Addr::new(198, 51, 100, 7));
    assert_eq!(
        f,
        [
            0, 1, 8, 0, 6, 4, 0, 1, 0x02, 0x11, 0x22, 0x33, 0x44, 0x55, 198, 51, 100, 7, 0, 0, 0,
            0, 0, 0, 198, 51, 100, 7
        ]
    );
}

#[test]
fn the_advertisement_is_built_field_by_field_and_its_checksum_checks() {
    let mac = [0x02, 0x11, 0x22, 0x33, 0x44, 0x55];
    let vip: Ipv6Addr = "2001:db8:1::7".parse().unwrap();
    let packet = neighbour_advertisement(mac, vip);
    let mut frame = vec![0x33, 0x33, 0, 0, 0, 1];
    frame.extend_from_slice(&mac);
    frame.extend_from_slice(&[0x86, 0xdd]);
    frame.extend_from_slice(&packet);
    check_frame(&frame, mac, vip);
    // The agent's sum agrees with this one, and a flipped bit shows.
    assert_eq!(icmpv6_checksum(vip, ALL_NODES, &packet[40..]), 0);
    let mut bad = packet;
    bad[50] ^= 0x80;
    assert_ne!(checksum_residue(&bad), 0);
    // An odd-length message is padded with a zero byte.
    let odd = [1u8, 2, 3];
    let a = icmpv6_checksum(vip, ALL_NODES, &odd);
    let b = icmpv6_checksum(vip, ALL_NODES, &[1, 2, 3, 0]);
    assert_ne!(a, b, "the length is summed too");
}
