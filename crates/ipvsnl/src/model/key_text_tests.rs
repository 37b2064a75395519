//! Service keys to text and back.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use proptest::prelude::*;

use super::ParseKeyError;
use crate::{AddressFamily, Protocol, ServiceKey};

fn key(text: &str) -> Result<ServiceKey, ParseKeyError> {
    text.parse()
}

fn any_key() -> impl Strategy<Value = ServiceKey> {
    let addr = prop_oneof![
        any::<u32>().prop_map(|a| IpAddr::V4(Ipv4Addr::from(a))),
        any::<u128>().prop_map(|a| IpAddr::V6(Ipv6Addr::from(a))),
        // The edges of the IPv6 spellings: mapped and compatible IPv4.
        any::<u32>().prop_map(|a| IpAddr::V6(Ipv4Addr::from(a).to_ipv6_mapped())),
        any::<u32>().prop_map(|a| IpAddr::V6(Ipv6Addr::from(u128::from(a)))),
    ];
    let inet = (any::<u16>(), addr, any::<u16>()).prop_map(|(p, addr, port)| ServiceKey::Inet {
        protocol: Protocol::from_raw(p),
        addr,
        port,
    });
    let family = prop_oneof![Just(AddressFamily::Inet), Just(AddressFamily::Inet6)];
    let mark = (any::<u32>(), family).prop_map(|(m, f)| ServiceKey::fwmark(m, f));
    prop_oneof![inet, mark]
}

proptest! {
    /// Whatever the key, its text reads back as itself, and that text is
    /// what the key prints again.
    #[test]
    fn every_key_round_trips_through_its_text(k in any_key()) {
        let text = k.to_string();
        let back = key(&text);
        prop_assert_eq!(back.as_ref(), Ok(&k), "{}", text);
        prop_assert_eq!(back.unwrap().to_string(), text);
    }
}

#[test]
fn each_form_reads_as_its_key() {
    let v4: IpAddr = "192.0.2.1".parse().unwrap();
    let v6: IpAddr = "2001:db8::1".parse().unwrap();
    let cases = [
        ("TCP 192.0.2.1:80", ServiceKey::tcp(v4, 80)),
        ("UDP [2001:db8::1]:53", ServiceKey::udp(v6, 53)),
        ("SCTP 192.0.2.1:0", ServiceKey::sctp(v4, 0)),
        (
            "protocol 47 192.0.2.1:65535",
            ServiceKey::Inet {
                protocol: Protocol::from_raw(47),
                addr: v4,
                port: 65535,
            },
        ),
        (
            "fwmark 7 (IPv6)",
            ServiceKey::fwmark(7, AddressFamily::Inet6),
        ),
        (
            "fwmark 4294967295 (IPv4)",
            ServiceKey::fwmark(u32::MAX, AddressFamily::Inet),
        ),
    ];
    for (text, want) in cases {
        assert_eq!(key(text), Ok(want), "{text}");
        assert_eq!(want.to_string(), text);
    }
}

#[test]
fn addresses_in_any_spelling_print_canonically() {
    let k = key("TCP [2001:DB8:0:0:0:0:0:1]:80").unwrap();
    assert_eq!(k.to_string(), "TCP [2001:db8::1]:80");
    // White space between the words is white space, however much.
    assert_eq!(
        key("  fwmark\t5   (IPv4) ").unwrap().to_string(),
        "fwmark 5 (IPv4)"
    );
}

#[test]
fn each_fault_is_named() {
    use ParseKeyError as E;
    let s = |t: &str| t.to_owned();
    let cases = [
        ("", E::Empty),
        ("   ", E::Empty),
        ("tcp:192.0.2.1:80", E::Protocol(s("tcp:192.0.2.1:80"))),
        ("tcp 192.0.2.1:80", E::Protocol(s("tcp"))),
        ("ICMP 192.0.2.1:80", E::Protocol(s("ICMP"))),
        ("TCP", E::MissingAddress(Protocol::Tcp)),
        ("TCP 192.0.2.1", E::Address(s("192.0.2.1"))),
        ("TCP 2001:db8::1:80", E::Address(s("2001:db8::1:80"))),
        ("TCP [2001:db8::1]", E::Address(s("[2001:db8::1]"))),
        ("TCP [192.0.2.1]:80", E::Address(s("[192.0.2.1]:80"))),
        ("TCP 192.0.2.256:80", E::Address(s("192.0.2.256:80"))),
        ("TCP [fe80::1%2]:80", E::Address(s("[fe80::1%2]:80"))),
        ("TCP 192.0.2.1:65536", E::Port(s("65536"))),
        ("TCP 192.0.2.1:+80", E::Port(s("+80"))),
        ("TCP 192.0.2.1:", E::Port(s(""))),
        ("TCP 192.0.2.1:80 extra", E::Trailing(s("extra"))),
        (
            "protocol",
            E::ProtocolNumber(s(""), "not a number from 0 to 65535"),
        ),
        (
            "protocol x 192.0.2.1:80",
            E::ProtocolNumber(s("x"), "not a number from 0 to 65535"),
        ),
        (
            "protocol 6 192.0.2.1:80",
            E::ProtocolNumber(s("6"), "this is TCP: write TCP"),
        ),
        (
            "protocol 17 192.0.2.1:80",
            E::ProtocolNumber(s("17"), "this is UDP: write UDP"),
        ),
        (
            "protocol 132 192.0.2.1:80",
            E::ProtocolNumber(s("132"), "this is SCTP: write SCTP"),
        ),
        ("fwmark", E::Mark(s(""))),
        ("fwmark -1 (IPv4)", E::Mark(s("-1"))),
        ("fwmark 4294967296 (IPv4)", E::Mark(s("4294967296"))),
        ("fwmark 5", E::Family(s(""))),
        ("fwmark 5 IPv4", E::Family(s("IPv4"))),
        ("fwmark 5 (ipv4)", E::Family(s("(ipv4)"))),
        ("fwmark 5 (IPv4) x", E::Trailing(s("x"))),
    ];
    for (text, want) in cases {
        assert_eq!(key(text), Err(want), "{text:?}");
    }
}

#[test]
fn messages_say_what_to_write() {
    let e = key("tcp 192.0.2.1:80").unwrap_err().to_string();
    assert_eq!(
        e,
        "\"tcp\" is not a protocol: expected TCP, UDP, SCTP, \"protocol <number>\" or \"fwmark\""
    );
    let e = key("UDP").unwrap_err().to_string();
    assert!(e.contains("no address after UDP"), "{e}");
    let e = key("protocol 6 192.0.2.1:80").unwrap_err().to_string();
    assert_eq!(e, "protocol number \"6\": this is TCP: write TCP");
}
