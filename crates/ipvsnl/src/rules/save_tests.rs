//! The `-S` printer of a whole service ([`write_service_rules`], whose
//! `-a` lines are composed on the stack when they can be) against the
//! printers of one rule ([`service_rule`], [`destination_rule`]), which
//! print piece by piece.

use std::net::IpAddr;

use super::{destination_rule, push_service_rules, service_rule, write_service_rules};
use super::{Names, Numeric};
use crate::{Destination, Forward, Protocol, Service, ServiceKey, Tunnel, TunnelFlags};

/// Names one host and one port.
struct SomeNames;

impl Names for SomeNames {
    fn host_name(&self, addr: &IpAddr) -> Option<String> {
        (addr.to_string() == "10.0.1.7").then(|| "web.example".to_owned())
    }
    fn port_name(&self, port: u16, protocol: &str) -> Option<String> {
        (port == 80 && protocol == "tcp").then(|| "http".to_owned())
    }
}

fn key(protocol: Protocol, addr: &str, port: u16) -> ServiceKey {
    ServiceKey::Inet {
        protocol,
        addr: addr.parse().unwrap(),
        port,
    }
}

fn dests() -> Vec<Destination> {
    let d = |a: &str, port: u16| Destination::new(a.parse().unwrap(), port);
    let mut gue = Tunnel::gue(6080);
    gue.flags = TunnelFlags::CSUM;
    vec![
        d("10.0.1.1", 80),
        d("10.0.1.7", 80).with_weight(3),
        d("255.255.255.255", 65535).with_weight(u32::MAX),
        d("0.0.0.0", 0).with_weight(2_147_483_648),
        d("172.16.100.200", 1000)
            .with_forward(Forward::Route)
            .with_weight(1000),
        d("1.2.3.4", 9).with_forward(Forward::Tunnel(Tunnel::ipip())),
        d("1.2.3.5", 9).with_forward(Forward::Tunnel(gue)),
        d("1.2.3.6", 9).with_forward(Forward::Tunnel(Tunnel::gre())),
        d("2001:db8::1", 443).with_weight(0),
    ]
}

#[test]
fn a_service_prints_as_its_rules_one_by_one() {
    let keys = [
        key(Protocol::Tcp, "10.0.0.1", 80),
        key(Protocol::Udp, "10.0.0.1", 53),
        // The longest numeric IPv4 label.
        key(Protocol::Sctp, "255.255.255.255", 65535),
        key(Protocol::Tcp, "2001:db8::100", 80),
        ServiceKey::fwmark(u32::MAX, crate::AddressFamily::Inet6),
        ServiceKey::fwmark(7, crate::AddressFamily::Inet),
    ];
    let names: [&dyn Names; 2] = [&Numeric, &SomeNames];
    let mut lines = 0;
    for key in keys {
        for names in names {
            let svc = Service::new(key);
            let dests = dests();
            let mut expected = format!("{}\n", service_rule(&svc, names));
            for d in &dests {
                expected.push_str(&destination_rule(&key, d, names));
                expected.push('\n');
                lines += 1;
            }
            let mut bytes = Vec::new();
            write_service_rules(&mut bytes, &svc, &dests, names);
            assert_eq!(String::from_utf8(bytes).unwrap(), expected);
            let mut text = String::from("before\n");
            push_service_rules(&mut text, &svc, &dests, names);
            assert_eq!(text, format!("before\n{expected}"));
        }
    }
    assert_eq!(lines, 6 * 2 * 9);
    // And what they print, for the usual lines.
    let mut text = Vec::new();
    let svc = Service::new(key(Protocol::Sctp, "255.255.255.255", 65535));
    write_service_rules(&mut text, &svc, &dests()[..5], &Numeric);
    assert_eq!(
        String::from_utf8(text).unwrap(),
        "-A --sctp-service 255.255.255.255:65535 -s wlc\n\
         -a --sctp-service 255.255.255.255:65535 -r 10.0.1.1:80 -m -w 1\n\
         -a --sctp-service 255.255.255.255:65535 -r 10.0.1.7:80 -m -w 3\n\
         -a --sctp-service 255.255.255.255:65535 -r 255.255.255.255:65535 -m -w -1\n\
         -a --sctp-service 255.255.255.255:65535 -r 0.0.0.0:0 -m -w -2147483648\n\
         -a --sctp-service 255.255.255.255:65535 -r 172.16.100.200:1000 -g -w 1000\n"
    );
}
